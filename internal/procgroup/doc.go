// Package procgroup owns groups of processes that die with the daemon.
//
// A child started with [Isolate] and then [Guard]ed belongs to a group of
// its own, so that everything it starts (a shell's pipeline, a launcher's
// helpers) can be ended at once with [Group.Signal], and so that the group
// ends when the daemon dies, however it dies:
//
//	cmd := exec.Command("bash", "-c", line)
//	procgroup.Isolate(cmd)
//	_ = cmd.Start()
//	g := procgroup.Guard(cmd.Process.Pid)
//	_ = cmd.Wait()
//	g.Signal(syscall.SIGKILL) // what the command left behind
//	g.Release()
//
// What differs per platform (one file each):
//
//   - Unix (Linux, macOS; procgroup_unix.go): the child leads a process
//     group whose id is its pid. Guard places a watchdog in that group
//     which kills the group when the daemon dies: the watchdog waits for
//     EOF on a pipe only the daemon holds the write end of, which the
//     kernel closes when the daemon exits, even on SIGKILL. The daemon's
//     own code does not run then, and an editor that kills the daemon's
//     process group does not reach the children's groups. A parent-death
//     signal (Pdeathsig) is no substitute: Go delivers it when the OS
//     thread that forked the child exits, which can happen while the
//     daemon lives, and it reaches only the direct child, not its group.
//   - Windows (procgroup_windows.go): the child starts suspended, Guard
//     puts it in a Job Object limited with kill-on-close and only then
//     lets it run, so nothing it starts escapes the job. Only the daemon
//     holds the job's handle, and Windows closes it when the daemon dies,
//     which ends every process of the job. Windows has no signals for
//     such trees: any signal but 0 terminates the whole job.
//
// The Windows wiring decisions (creation flags, job limits, which threads
// to resume, which signals terminate) are pure functions in wiring.go,
// tested on every platform.
package procgroup
