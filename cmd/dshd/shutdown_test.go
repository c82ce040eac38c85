//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/acp"
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
	p := start(t, cwd, "--script", scriptFile, "--config", cfg, "--state-dir", filepath.Join(dir, "state"))
	sess := openSession(t, ctx, p.conn, cwd, nil)
	answered := make(chan error, 1)
	go func() {
		_, err := p.conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("run")}})
		answered <- err
	}()
	// Wait until the command has started its child.
	pidFile := filepath.Join(cwd, "child.pid")
	var pid int
	waitFor(t, ctx, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	<-answered // answered (cancelled) or the connection closed: either way it returned
	waitFor(t, ctx, func() bool { return gone(pid) })
}

// gone reports whether a process has ended: it no longer exists, or it is
// a zombie waiting for a parent (in a container, PID 1 may never reap it).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // no procfs: only a vanished process counts
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
