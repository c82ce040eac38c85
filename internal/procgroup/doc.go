// Package procgroup owns process groups that die with the daemon.
//
// A child started with [Isolate] leads a process group of its own, so that
// everything it starts (a shell's pipeline, a launcher's helpers) can be
// signalled at once. [Guard] places a watchdog in that group which kills
// the group when the daemon dies, however it dies: the watchdog waits for
// EOF on a pipe only the daemon holds the write end of, which the kernel
// closes when the daemon exits, even on SIGKILL. The daemon's own code does
// not run then, and an editor that kills the daemon's process group does
// not reach the children's groups.
//
// A parent-death signal (Pdeathsig) is no substitute: Go delivers it when
// the OS thread that forked the child exits, which can happen while the
// daemon lives, and it reaches only the direct child, not its group.
package procgroup
