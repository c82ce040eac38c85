package procgroup

import "syscall"

// The Windows values the wiring below is made of. They are spelled out
// here, not taken from golang.org/x/sys/windows, so that the decisions are
// tested on every platform; procgroup_windows.go checks at compile time
// that each equals its x/sys/windows counterpart.
const (
	createSuspended        = 0x00000004 // CREATE_SUSPENDED
	createNewProcessGroup  = 0x00000200 // CREATE_NEW_PROCESS_GROUP
	createBreakawayFromJob = 0x01000000 // CREATE_BREAKAWAY_FROM_JOB

	jobLimitKillOnJobClose    = 0x00002000 // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	jobLimitBreakawayOK       = 0x00000800 // JOB_OBJECT_LIMIT_BREAKAWAY_OK
	jobLimitSilentBreakawayOK = 0x00001000 // JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK
)

// windowsCreationFlags is what Isolate asks CreateProcess for, given the
// flags already set: the child starts suspended, so that Guard can put it
// in its job before it runs a single instruction (a child running before
// that could start a grandchild outside the job), and in a console process
// group of its own, so that a Ctrl+C meant for the daemon's console does
// not reach it. A request to break away from the daemon's own job is
// dropped: the command must stay where Guard puts it.
func windowsCreationFlags(existing uint32) uint32 {
	return existing&^createBreakawayFromJob | createSuspended | createNewProcessGroup
}

// jobLimitFlags are the limits of a command's job: kill every process of
// the job when its last handle (the daemon's) closes, and no breakaway, so
// that every descendant stays in the job.
func jobLimitFlags() uint32 {
	return jobLimitKillOnJobClose &^ (jobLimitBreakawayOK | jobLimitSilentBreakawayOK)
}

// thread is one row of a thread snapshot: a thread id and the process it
// belongs to.
type thread struct {
	id, owner uint32
}

// threadsOf returns the ids of the threads owned by pid, in snapshot
// order: the threads Guard resumes once the child is in its job. A
// suspended new process has exactly one, but resuming all of them costs
// nothing and does not depend on that.
func threadsOf(snapshot []thread, pid uint32) []uint32 {
	var ids []uint32
	for _, t := range snapshot {
		if t.owner == pid {
			ids = append(ids, t.id)
		}
	}
	return ids
}

// terminates reports whether sig ends a job on Windows. There is no
// SIGTERM for a tree of console processes there, so every signal but 0
// (which on Unix only probes) terminates the whole job.
func terminates(sig syscall.Signal) bool { return sig != 0 }
