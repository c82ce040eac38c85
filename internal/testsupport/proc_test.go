//go:build unix

package testsupport

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestProcs(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid

	p, ok := ReadProc(pid)
	if !ok || p.PPID != os.Getpid() || p.PGID != pid || p.Comm != "sleep" || !p.Live() {
		t.Fatalf("ReadProc(%d) = %+v, %v", pid, p, ok)
	}
	found := false
	for _, d := range Descendants(os.Getpid()) {
		found = found || d.PID == pid
	}
	if !found {
		t.Error("Descendants misses the child")
	}
	if g := InGroups(pid); len(g) != 1 || g[0].PID != pid {
		t.Errorf("InGroups = %+v", g)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, ok := ReadProc(pid); ok {
		t.Error("a reaped process is still read")
	}
	if g := InGroups(pid); len(g) != 0 {
		t.Errorf("InGroups after the kill = %+v", g)
	}
}

func TestSyncBufferLimit(t *testing.T) {
	b := &SyncBuffer{Limit: 4}
	for _, s := range []string{"abc", "de", "fgh"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "abcde" {
		t.Fatalf("String() = %q, want the writes until the limit was passed", got)
	}
}
