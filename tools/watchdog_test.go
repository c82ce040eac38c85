package tools

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// When DSHD_TOOLS_ORPHAN_CHILD is set, the test binary plays a daemon that
// runs a long command and waits to be killed.
func init() {
	if os.Getenv("DSHD_TOOLS_ORPHAN_CHILD") == "" {
		return
	}
	_, _ = Run(context.Background(), Command{Line: "sleep 300; echo never", Dir: os.TempDir()})
	os.Exit(0)
}

// TestDaemonDeathKillsCommand kills a "daemon" with SIGKILL while its
// command runs: the command's watchdog must end it.
func TestDaemonDeathKillsCommand(t *testing.T) {
	daemon := exec.Command(os.Args[0], "-test.run=^$")
	daemon.Env = append(os.Environ(), "DSHD_TOOLS_ORPHAN_CHILD=1")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()

	var sleeper int
	for deadline := time.Now().Add(20 * time.Second); sleeper == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the daemon never started its command")
		}
		sleeper = childOf(daemon.Process.Pid)
		time.Sleep(10 * time.Millisecond)
	}
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	for deadline := time.Now().Add(20 * time.Second); alive(sleeper); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(sleeper, syscall.SIGKILL)
			t.Fatalf("command %d outlived its daemon", sleeper)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// childOf returns the pid of a child of parent, 0 if none.
func childOf(parent int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid(pid) == parent {
			return pid
		}
	}
	return 0
}

func ppid(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
