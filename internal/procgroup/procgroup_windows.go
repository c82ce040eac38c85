//go:build windows

package procgroup

import (
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Each constant of wiring.go equals its x/sys/windows counterpart: a
// difference either way overflows an unsigned constant and fails the build.
const (
	_ = uint32(createSuspended - windows.CREATE_SUSPENDED)
	_ = uint32(windows.CREATE_SUSPENDED - createSuspended)
	_ = uint32(createNewProcessGroup - windows.CREATE_NEW_PROCESS_GROUP)
	_ = uint32(windows.CREATE_NEW_PROCESS_GROUP - createNewProcessGroup)
	_ = uint32(createBreakawayFromJob - windows.CREATE_BREAKAWAY_FROM_JOB)
	_ = uint32(windows.CREATE_BREAKAWAY_FROM_JOB - createBreakawayFromJob)
	_ = uint32(jobLimitKillOnJobClose - windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
	_ = uint32(windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE - jobLimitKillOnJobClose)
	_ = uint32(jobLimitBreakawayOK - windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK)
	_ = uint32(windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK - jobLimitBreakawayOK)
	_ = uint32(jobLimitSilentBreakawayOK - windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK)
	_ = uint32(windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK - jobLimitSilentBreakawayOK)
)

// Isolate makes cmd start suspended and in a console process group of its
// own; [Guard] puts it in its job and lets it run, so Guard must follow
// cmd.Start. It keeps the rest of cmd.SysProcAttr.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags = windowsCreationFlags(cmd.SysProcAttr.CreationFlags)
}

// Group is the Job Object of one command and everything it starts.
type Group struct {
	pid int

	mu      sync.Mutex
	job     windows.Handle // 0 when no job could be made, or after Release
	process windows.Handle // the leader, for when there is no job
}

// Guard puts the process pid, started suspended by [Isolate], in a new
// Job Object that ends with the daemon, then resumes it. The process is
// resumed even when no job can be made (it then runs unguarded, and
// Signal ends the leader alone): a command must never hang suspended.
func Guard(pid int) *Group {
	g := &Group{pid: pid}
	const access = windows.PROCESS_SET_QUOTA | windows.PROCESS_TERMINATE | windows.SYNCHRONIZE
	h, err := windows.OpenProcess(access, false, uint32(pid))
	if err == nil {
		g.process = h
		if job, err := newJob(); err == nil {
			if windows.AssignProcessToJobObject(job, h) == nil {
				g.job = job
			} else {
				windows.CloseHandle(job)
			}
		}
	}
	resume(uint32(pid))
	return g
}

// newJob creates a job whose processes die when its last handle closes.
// The handle is not inheritable: only the daemon holds it.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = jobLimitFlags()
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// resume resumes every thread of pid.
func resume(pid uint32) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return
	}
	defer windows.CloseHandle(snap)
	var threads []thread
	e := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err := windows.Thread32First(snap, &e); err == nil; err = windows.Thread32Next(snap, &e) {
		threads = append(threads, thread{id: e.ThreadID, owner: e.OwnerProcessID})
	}
	for _, id := range threadsOf(threads, pid) {
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, id)
		if err != nil {
			continue
		}
		_, _ = windows.ResumeThread(t)
		windows.CloseHandle(t)
	}
}

// PGID returns the leader's process id (Windows has no group id).
func (g *Group) PGID() int { return g.pid }

// Signal terminates every process of the job for any sig but 0 (see
// [terminates]). A job already empty is no error worth reporting.
func (g *Group) Signal(sig syscall.Signal) {
	if !terminates(sig) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.job != 0:
		_ = windows.TerminateJobObject(g.job, 1)
	case g.process != 0:
		_ = windows.TerminateProcess(g.process, 1)
	}
}

// Release terminates whatever is left in the job and closes its handle.
// Call it once the leader was reaped. A second Release does nothing.
func (g *Group) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
		windows.CloseHandle(g.job)
		g.job = 0
	}
	if g.process != 0 {
		windows.CloseHandle(g.process)
		g.process = 0
	}
}
