//go:build linux

package sandbox_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/sandbox"
)

// TestServerWithoutNamespaces: where user namespaces are unavailable the
// server still confines writes to the roots with Landlock alone and cuts
// TCP with Landlock's network rules. (Forced here: this machine has
// namespaces.)
func TestServerWithoutNamespaces(t *testing.T) {
	if a := requireSandbox(t); a.LandlockABI < 4 {
		t.Fatalf("Landlock ABI %d has no network rules", a.LandlockABI)
	}
	root := t.TempDir()
	outside := filepath.Join(testsupport.OutsideSandbox(t), "victim")
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: false, WritableRoots: []string{root}}
	start, end, err := sandbox.ServerWithoutNamespaces(p)
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	run := func(line string) int {
		t.Helper()
		proc, err := start(sandbox.Spec{Argv: []string{"/bin/bash", "-c", line}, Dir: root, Env: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := proc.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return ws.ExitStatus()
	}
	if code := run("echo ok > inside"); code != 0 {
		t.Errorf("writing inside the root: exit %d", code)
	}
	if code := run("echo pwned > " + outside); code == 0 {
		t.Errorf("wrote %s outside the roots", outside)
	}
	if code := run("exec 3<>/dev/tcp/127.0.0.1/" + port); code == 0 {
		t.Error("connected over TCP with network: false")
	}
}
