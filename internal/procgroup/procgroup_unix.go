//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// Isolate makes cmd, once started, the leader of a new process group whose
// id is its pid. It keeps the rest of cmd.SysProcAttr.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// Group is a process group guarded by a watchdog.
type Group struct {
	pgid int

	// watchdog sits in the group and kills it when alarm, the write end
	// of its stdin, closes. Both are nil when the watchdog could not start.
	watchdog *exec.Cmd
	alarm    *os.File
}

// Guard starts the watchdog of the process group pgid, which the caller
// started with [Isolate] (pgid is the leader's pid). The leader must not
// have been reaped yet, or the group id may already name another group.
// If the watchdog cannot start (the group is already empty) there is
// nothing left to guard, and the Group only signals.
func Guard(pgid int) *Group {
	g := &Group{pgid: pgid}
	r, w, err := os.Pipe()
	if err != nil {
		return g
	}
	wd := exec.Command("bash", "-c", `read -r _; kill -KILL -- "-$1" 2>/dev/null`, "dshd-watchdog", strconv.Itoa(pgid))
	wd.Stdin = r // stdout and stderr: /dev/null
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := wd.Start(); err != nil {
		r.Close()
		w.Close()
		return g
	}
	r.Close()
	g.watchdog, g.alarm = wd, w
	return g
}

// PGID returns the process group id.
func (g *Group) PGID() int { return g.pgid }

// Signal sends sig to every process of the group. A group already gone
// (ESRCH) is no error worth reporting, so none is returned.
func (g *Group) Signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
}

// Release retires the watchdog, which kills whatever is left in the group.
// Call it only once the leader was reaped and the group killed: a leader
// still running would be killed here, in whatever it was doing (a command
// closes its output in an exit handler and exits after). The watchdog
// holds the group id while it lives, so until Release the id cannot name
// another group. Release is not safe for concurrent use; call it once.
func (g *Group) Release() {
	if g.watchdog == nil {
		return
	}
	g.alarm.Close()
	_ = g.watchdog.Wait()
	g.watchdog = nil
}
