package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/policy"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// liveScript reads README.md on every prompt.
const liveScript = `{"turns":[
  {"match":"first","responses":[{"toolCalls":[{"id":"r1","name":"read","arguments":{"path":"README.md"}}]},{"text":"one"}]},
  {"match":"second","responses":[{"toolCalls":[{"id":"r2","name":"read","arguments":{"path":"README.md"}}]},{"text":"two"}]}]}`

// TestSettingsChangeAppliesToTheRunningSession edits the settings file
// while a session runs: the deny rule added to it applies to the session's
// next tool call, without a restart.
func TestSettingsChangeAppliesToTheRunningSession(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := &acptest.Client{Permission: acptest.RejectOnce}
	p, cfg := serveWatching(t, ctx, liveScript, `{"permissions": {"allow": ["read"]}}`, cl)
	d, conn := p.d, p.conn

	sess := openSession(t, ctx, conn, cwd, nil)
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "first", "r1"); st != acp.ToolCallCompleted {
		t.Fatalf("read before the change: %s", st)
	}

	saveSettings(t, cfg, `{"permissions": {"allow": ["read"], "deny": ["read(README.md)"], "defaultMode": "plan"}}`)
	p.waitFor(t, func() bool { return len(d.agent.Rules().Deny) == 1 })
	if got := d.agent.Rules().Deny[0]; got != policy.MustParseRule("read(README.md)") {
		t.Fatalf("deny rule %v", got)
	}
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "second", "r2"); st != acp.ToolCallFailed {
		t.Fatalf("read after the deny rule: %s", st)
	}
	if raw := lastRawOutput(cl, "r2"); !strings.Contains(raw, "read(README.md)") {
		t.Errorf("the failure does not name the deny rule: %s", raw)
	}

	// New sessions start in the new default mode.
	planned, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil || planned.Modes == nil || planned.Modes.CurrentModeID != "plan" {
		t.Errorf("new session after the change: %+v %v", planned, err)
	}

	// A broken file keeps the last good settings.
	if err := os.WriteFile(cfg, []byte(`{"permissions": {"deny": ["read("]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.live.Reload(); err == nil || !strings.Contains(err.Error(), cfg) {
		t.Errorf("reload of a bad file: %v", err)
	}
	if len(d.agent.Rules().Deny) != 1 {
		t.Error("a bad file replaced the rules")
	}

	if err := cl.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	p.exit(t)
}

// inProcess is a daemon built by newDaemon and served over in-memory pipes
// to an acptest client, as these tests run it.
type inProcess struct {
	d      *daemon
	conn   *acp.AgentConn
	stdin  io.WriteCloser         // the daemon's stdin: closing it is EOF
	served chan int               // serve's exit code
	log    testsupport.SyncBuffer // the daemon's log (info and up)
}

// serveInProcess builds a daemon from f, with XDG_CONFIG_HOME in
// dir/user-config and nothing else in its environment, and serves it to cl
// until ctx ends.
func serveInProcess(t *testing.T, ctx context.Context, dir string, f flags, cl *acptest.Client) *inProcess {
	t.Helper()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(dir, "user-config")
		}
		return ""
	}
	p := &inProcess{served: make(chan int, 1)}
	d, err := newDaemon(f, getenv, slog.New(slog.NewTextHandler(&p.log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	p.d, p.stdin = d, toAgentW
	go func() { p.served <- d.serve(ctx, toAgentR, fromAgentW) }()
	p.conn = cl.Serve(ctx, pipes{ReadCloser: fromAgentR, w: toAgentW})
	return p
}

// serveWatching serves a daemon in process, as serveInProcess does, with
// the script and the settings file given (in a directory of its own), once
// it watches the settings file; it returns the file's path.
func serveWatching(t *testing.T, ctx context.Context, script, settings string, cl *acptest.Client) (*inProcess, string) {
	t.Helper()
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	cfg := filepath.Join(dir, "settings.json")
	writeFiles(t, map[string]string{scriptFile: script, cfg: settings})
	p := serveInProcess(t, ctx, dir, flags{script: scriptFile, config: cfg, stateDir: filepath.Join(dir, "state"), logLevel: "info"}, cl)
	<-p.d.live.Watching()
	return p, cfg
}

// saveSettings replaces the settings file cfg with body as an editor saves:
// it writes a temporary file and renames it over the original.
func saveSettings(t *testing.T, cfg, body string) {
	t.Helper()
	tmp := cfg + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
}

// exit ends the daemon's input and checks that it exits cleanly.
func (p *inProcess) exit(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	if code := <-p.served; code != exitOK {
		t.Errorf("serve returned %d", code)
	}
}

// writeFiles writes each file (path → content).
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// promptStatus sends a prompt and returns the final status of a call.
func promptStatus(t *testing.T, ctx context.Context, conn *acp.AgentConn, cl *acptest.Client, session, text, callID string) acp.ToolCallStatus {
	t.Helper()
	resp, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: session, Prompt: []acp.ContentBlock{acp.Text(text)}})
	if err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt %q: %v %v", text, resp, err)
	}
	var st acp.ToolCallStatus
	for _, n := range cl.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == callID && u.Status != nil {
			st = *u.Status
		}
	}
	return st
}

// lastRawOutput returns the rawOutput of a call's last update.
func lastRawOutput(cl *acptest.Client, callID string) string {
	var raw string
	for _, n := range cl.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == callID && u.RawOutput != nil {
			raw = string(u.RawOutput)
		}
	}
	return raw
}

// waitFor waits until cond holds, checking it again after each line the
// daemon logs: the changes these tests wait for (a settings reload, an MCP
// server's new tool list) are logged once they are in force, so nothing
// polls. It fails the test after a minute (a failure bound only).
func (p *inProcess) waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	p.log.WaitFor(t, time.Minute, "condition", func(string) bool { return cond() })
}
