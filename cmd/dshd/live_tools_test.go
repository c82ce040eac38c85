package main

import (
	"context"
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
	cwd := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &acptest.Client{}
	p, cfg := serveWatching(t, ctx, taskScript, `{}`, cl)
	d, conn := p.d, p.conn

	sess := openSession(t, ctx, conn, cwd, nil)
	hasTask := func() bool { _, ok := d.registry.Lookup(sess.SessionID, "task"); return ok }
	if !hasTask() {
		t.Fatal("the session starts without the task tool")
	}

	saveSettings(t, cfg, `{"tools": {"deny": ["task"]}}`)
	p.waitFor(t, func() bool { return !hasTask() })
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "delegate", "t1"); st != acp.ToolCallFailed {
		t.Fatalf("task after the deny: %s", st)
	}
	if raw := lastRawOutput(cl, "t1"); !strings.Contains(raw, "UNKNOWN_TOOL") {
		t.Errorf("the failure is not an unknown tool: %s", raw)
	}

	saveSettings(t, cfg, `{}`)
	p.waitFor(t, hasTask)

	p.exit(t)
}
