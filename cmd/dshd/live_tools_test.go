package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// taskScript calls the task tool on the prompt "delegate".
const taskScript = `{"turns":[
  {"match":"delegate","responses":[{"toolCalls":[{"id":"t1","name":"task","arguments":{"prompt":"look around"}}]},{"text":"done"}]}]}`

// TestToolDenyReachesTheRunningSessionsTask: the task tool is a session
// tool, which registry restrictions do not reach; denying it in the
// settings file still removes it from the running session, whose next
// task call fails as an unknown tool, and allowing it again brings it
// back.
func TestToolDenyReachesTheRunningSessionsTask(t *testing.T) {
	dir := t.TempDir()
	cwd := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	cfg := filepath.Join(dir, "settings.json")
	writeFiles(t, map[string]string{scriptFile: taskScript, cfg: `{}`})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &acptest.Client{}
	p := serveInProcess(t, ctx, dir, flags{script: scriptFile, config: cfg, stateDir: filepath.Join(dir, "state"), logLevel: "info"}, cl)
	d, conn := p.d, p.conn
	<-d.live.Watching()

	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	hasTask := func() bool { _, ok := d.registry.Lookup(sess.SessionID, "task"); return ok }
	if !hasTask() {
		t.Fatal("the session starts without the task tool")
	}

	save := func(body string) {
		t.Helper()
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	save(`{"tools": {"deny": ["task"]}}`)
	waitFor(t, ctx, func() bool { return !hasTask() })
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "delegate", "t1"); st != acp.ToolCallFailed {
		t.Fatalf("task after the deny: %s", st)
	}
	if raw := lastRawOutput(cl, "t1"); !strings.Contains(raw, "UNKNOWN_TOOL") {
		t.Errorf("the failure is not an unknown tool: %s", raw)
	}

	save(`{}`)
	waitFor(t, ctx, hasTask)

	p.exit(t)
}
