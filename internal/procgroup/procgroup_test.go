//go:build unix

package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// daemonEnv makes the test binary play a daemon: it starts a guarded
// group, prints its id (and the group's shell prints "started", in either
// order) and waits to be killed.
const daemonEnv = "DSHD_PROCGROUP_TEST_DAEMON"

func TestMain(m *testing.M) {
	if os.Getenv(daemonEnv) != "" {
		// The shell says "started" once it has forked both sleeps.
		cmd := exec.Command("bash", "-c", "sleep 300 & sleep 300 & echo started; wait")
		cmd.Stdout = os.Stdout
		Isolate(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		Guard(cmd.Process.Pid)
		fmt.Println(cmd.Process.Pid)
		// Park until killed (the test sends SIGKILL). Not select{}: with
		// every goroutine blocked the runtime reports a deadlock and the
		// "daemon" dies early; a goroutine waiting for a signal is not.
		parked := make(chan os.Signal, 1)
		signal.Notify(parked, syscall.SIGTERM)
		<-parked
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// startGroup starts line in a guarded group of its own, once its children
// run (it says so on stdout).
func startGroup(t *testing.T, line string) (*exec.Cmd, *Group) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line+"\necho started\nwait")
	Isolate(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := Guard(cmd.Process.Pid)
	if g.PGID() != cmd.Process.Pid {
		t.Fatalf("PGID %d, want the leader's pid %d", g.PGID(), cmd.Process.Pid)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "started\n" {
		t.Fatalf("the group said %q", line)
	}
	t.Cleanup(func() {
		g.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		g.Release()
	})
	return cmd, g
}

func TestIsolate(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: false, Noctty: true, Pgid: 42}
	Isolate(cmd)
	if a := cmd.SysProcAttr; !a.Setpgid || a.Pgid != 0 || !a.Noctty {
		t.Errorf("SysProcAttr %+v: want Setpgid, Pgid 0 and Noctty kept", a)
	}
	cmd = exec.Command("true")
	Isolate(cmd)
	if !cmd.SysProcAttr.Setpgid {
		t.Error("a nil SysProcAttr was not made to isolate")
	}
}

// The watchdog joins the group, and Signal reaches the whole group,
// background children included.
func TestSignalKillsTheGroup(t *testing.T) {
	cmd, g := startGroup(t, "sleep 300 & (sleep 300; echo never) &")
	members := testsupport.InGroups(g.PGID())
	var comms []string
	for _, p := range members {
		comms = append(comms, p.Comm)
	}
	if len(members) < 4 { // the shell, two sleeps, the watchdog (a subshell may add one)
		t.Fatalf("group members %v", comms)
	}
	g.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	testsupport.WaitGroupGone(t, g.PGID())
	g.Signal(syscall.SIGKILL) // ESRCH is fine
	g.Release()
	g.Release() // and so is a second Release
}

// Closing the alarm is what the kernel does when the daemon dies: the
// watchdog kills the group.
func TestReleaseKillsWhatIsLeft(t *testing.T) {
	cmd, g := startGroup(t, "sleep 300 &")
	g.Release()
	if err := cmd.Wait(); err == nil {
		t.Error("the leader exited on its own; it should have been killed")
	}
	testsupport.WaitGroupGone(t, g.PGID())
}

// A group whose leader already ended has nothing left to guard.
func TestGuardAnEmptyGroup(t *testing.T) {
	cmd := exec.Command("true")
	Isolate(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	g := Guard(cmd.Process.Pid)
	if g.watchdog != nil {
		t.Error("a watchdog started in a group that is gone")
	}
	g.Signal(syscall.SIGKILL)
	g.Release()
}

// A daemon killed with SIGKILL runs no code: the watchdog kills its group.
func TestDaemonDeathKillsTheGroup(t *testing.T) {
	daemon, out := testsupport.StartSelf(t, daemonEnv+"=1")
	r := bufio.NewReader(out)
	pgid, started := 0, false
	for pgid == 0 || !started {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the daemon ended before its group ran: %v", err)
		}
		if line == "started\n" {
			started = true
		} else if pgid, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
			t.Fatalf("the daemon said %q", line)
		}
	}
	if n := len(testsupport.InGroups(pgid)); n < 3 {
		t.Fatalf("group %d has %d live members, want the shell and its two sleeps: %v", pgid, n, testsupport.InGroups(pgid))
	}
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	testsupport.WaitGroupGone(t, pgid)
}
