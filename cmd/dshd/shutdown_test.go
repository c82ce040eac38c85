//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/testsupport"
)

// TestSIGTERMKillsRunningCommands stops the daemon while a command runs:
// the prompt is answered, the command's process group is killed, and the
// daemon exits cleanly.
func TestSIGTERMKillsRunningCommands(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	cwd := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	cfg := filepath.Join(dir, "settings.json")
	files := map[string]string{
		scriptFile: `{"turns":[{"responses":[{"toolCalls":[{"id":"b1","name":"bash","arguments":{"command":"sleep 1000 & echo $! > child.pid; wait"}}]}]}]}`,
		cfg:        `{"permissions": {"defaultMode": "bypassPermissions"}}`,
	}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pidFile := filepath.Join(cwd, "child.pid")
	if err := syscall.Mkfifo(pidFile, 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, cwd, "--script", scriptFile, "--config", cfg, "--state-dir", filepath.Join(dir, "state"))
	sess := openSession(t, ctx, p.conn, cwd, nil)
	answered := make(chan error, 1)
	go func() {
		_, err := p.conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("run")}})
		answered <- err
	}()
	// The command says its child's pid through a FIFO: reading it
	// returns once the child runs and the shell has closed its end.
	pid := testsupport.ReadPID(t, pidFile)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	<-answered                   // answered (cancelled) or the connection closed: either way it returned
	testsupport.WaitExit(t, pid) // a zombie counts as gone: in a container PID 1 may never reap it
}
