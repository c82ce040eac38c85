package tools

import "syscall"

// procAttr puts a command in its own process group, so that cancelling it
// can kill everything it started, and asks the kernel to SIGKILL it if the
// daemon dies without cleaning up (kill -9, a crash): an editor kills the
// daemon's process group on disconnect, which no longer contains ours.
// Grandchildren of a compound command are not covered by the parent-death
// signal; docs/rough_edges.md says more.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
