package mcp

import (
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-tools/dshd/internal/procgroup"
)

// terminateGrace is how long a stdio server may take to exit once its stdin
// closed, and again after SIGTERM, before it is killed.
const terminateGrace = 2 * time.Second

// stderrGrace bounds how long a server's stderr is awaited after its process
// group was killed: only a descendant that escaped the group (setsid) can
// hold the pipe open that long.
const stderrGrace = 2 * time.Second

// stdioTransport starts a stdio server as the go-sdk's CommandTransport
// does, but in a process group of its own, guarded so that it dies with the
// daemon: launchers (npx, uvx, shell wrappers) leave helpers behind that
// the go-sdk, which signals only its direct child, would not end.
type stdioTransport struct {
	cmd    *exec.Cmd
	stderr io.Writer

	mu   sync.Mutex
	conn *stdioConn // once connected
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	procgroup.Isolate(t.cmd)
	// The server's stderr is a pipe of ours rather than whatever io.Writer
	// the caller gave: os/exec would otherwise copy it in a goroutine that
	// cmd.Wait awaits, so a helper holding stderr open would hold up the
	// go-sdk's Close until SIGKILL, which then finds the server reaped and
	// fails.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.cmd.Stderr = w
	inner := &sdk.CommandTransport{Command: t.cmd, TerminateDuration: terminateGrace}
	conn, err := inner.Connect(ctx)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	c := &stdioConn{Connection: conn, group: procgroup.Guard(t.cmd.Process.Pid), stderr: r, copied: make(chan struct{})}
	go func() {
		defer close(c.copied)
		_, _ = io.Copy(t.stderr, r)
	}()
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, nil
}

// close ends the server if Connect started it. The go-sdk closes the
// connection when the MCP handshake fails, but not on every path.
func (t *stdioTransport) close() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// stdioConn is the go-sdk's connection to a stdio server whose Close also
// ends everything the server started.
type stdioConn struct {
	sdk.Connection
	group  *procgroup.Group
	stderr *os.File      // read end of the server's stderr
	copied chan struct{} // closed when stderr was copied to EOF

	once sync.Once
	err  error
}

// Close stops the server as the go-sdk does (stdin closed, then SIGTERM,
// then SIGKILL, and the server reaped), then kills what is left in its
// process group, and only then retires the group's watchdog: retiring it
// kills the group, which must not catch a server still exiting on its own.
// The go-sdk may call Close more than once, concurrently.
func (c *stdioConn) Close() error {
	c.once.Do(func() {
		c.err = c.Connection.Close()
		c.group.Signal(syscall.SIGKILL)
		select {
		case <-c.copied:
		case <-time.After(stderrGrace):
			c.stderr.Close() // unblocks the copy
			<-c.copied
		}
		c.stderr.Close()
		c.group.Release()
	})
	return c.err
}
