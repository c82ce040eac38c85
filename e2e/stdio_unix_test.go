//go:build unix

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/testsupport"
)

// TestWaitingForTheEditorHoldsNoThread: at rest, the daemon waits for the
// editor's next message parked in Go's network poller, not blocked in
// read(2). A goroutine blocked in a system call holds one of the process's
// Ps; with another one in a system call (the sandbox probe waits for its
// child at initialize) none was left, and the initialize answer waited up
// to 20 ms for the runtime to take one back. Editors give their agents
// pipes (Zed) or socket pairs (libuv: Neovim, Node); both are checked.
func TestWaitingForTheEditorHoldsNoThread(t *testing.T) {
	for _, kind := range []string{"pipe", "socketpair"} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, script{Turns: []turn{{Responses: []response{{Text: "hi"}}}}})
			var conn *acp.AgentConn
			if kind == "pipe" {
				_, conn = f.start(t).leanClient(t)
			} else {
				conn = startOnSocket(t, f)
			}
			initialize(t, conn)
			s := statsBaseline(t, connStats(conn))
			var blocked []string
			for _, g := range s.Parked {
				// The signal receiver waits in the runtime, by design.
				if g.State == "syscall" && g.Func != "os/signal.signal_recv" {
					blocked = append(blocked, g.String())
				}
			}
			if len(blocked) > 0 {
				t.Errorf("at rest, goroutines wait in a system call:\n  %s", strings.Join(blocked, "\n  "))
			}
		})
	}
}

// startOnSocket spawns the daemon on the fixture with one end of a socket
// pair as its stdin and stdout, as libuv starts a child, and connects to
// the other end.
func startOnSocket(t *testing.T, f *fixture) *acp.AgentConn {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "editor"), os.NewFile(uintptr(fds[1]), "agent")
	cmd := exec.Command(dshdBin, f.args()...)
	cmd.Dir, cmd.Env = f.ws, f.env()
	cmd.SysProcAttr = ownProcessGroup()
	stderr := &testsupport.SyncBuffer{Limit: 1 << 20}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = theirs.Close() // the child's end, as an editor closes it
	ctx, cancel := context.WithCancel(context.Background())
	conn := acp.ConnectAgent(ctx, ours, &leanClient{})
	t.Cleanup(func() {
		cancel()
		_ = conn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr of dshd:\n%s", stderr.String())
		}
	})
	return conn
}
