package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// permissionAnswers answers permission requests by tool call id (allow
// once when an id has no answer) and counts who asked.
type permissionAnswers struct {
	mu     sync.Mutex
	answer map[string]acptest.PermissionPolicy
	asked  map[string]int
	names  map[string][]string // the options' names, by call id
}

func newAnswers(answer map[string]acptest.PermissionPolicy) *permissionAnswers {
	return &permissionAnswers{answer: answer, asked: map[string]int{}, names: map[string][]string{}}
}

func (a *permissionAnswers) policy(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	a.mu.Lock()
	id := req.ToolCall.ToolCallID
	a.asked[id]++
	for _, o := range req.Options {
		a.names[id] = append(a.names[id], o.Name)
	}
	p := a.answer[id]
	a.mu.Unlock()
	if p == nil {
		p = acptest.AllowOnce
	}
	return p(ctx, req)
}

func (a *permissionAnswers) count(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked[id]
}

// fileChangeScript writes notes.txt, then edits it, then writes a second
// file in the same directory, one turn each.
func fileChangeScript() script {
	return script{Turns: []turn{
		{Match: "^write$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "w1", Name: "write", Arguments: map[string]any{"path": "notes/a.txt", "content": "one\n"}}}},
			{Text: "written"},
		}},
		{Match: "^edit$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "e1", Name: "edit", Arguments: map[string]any{"path": "notes/a.txt", "old": "one", "new": "two"}}}},
			{Text: "edited"},
		}},
		{Match: "^write-again$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "w2", Name: "write", Arguments: map[string]any{"path": "notes/b.txt", "content": "b\n"}}}},
			{Text: "written again"},
		}},
	}}
}

// TestAlwaysAllowCoversFileChanges is the regression test of issue 13's
// "Always allow is narrower than it reads": after Always allow on a write,
// an edit of the same file ran only after asking again, because the
// remembered rule named the write tool. File changes are one class now.
func TestAlwaysAllowCoversFileChanges(t *testing.T) {
	f := newFixture(t, fileChangeScript())
	if err := os.MkdirAll(filepath.Join(f.ws, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := f.start(t)
	asks := newAnswers(map[string]acptest.PermissionPolicy{"w1": acptest.AllowAlways})
	c := &acptest.Client{Permission: asks.policy}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})
	ctx := callCtx(t, time.Minute)
	for _, text := range []string{"write", "edit"} {
		if _, err := prompt(ctx, conn, sid, text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if n := asks.count("w1"); n != 1 {
		t.Errorf("the write asked %d times, want 1", n)
	}
	if n := asks.count("e1"); n != 0 {
		t.Errorf("the edit of the file answered Always allow for its write asked %d times, want 0", n)
	}
	st := toolStatuses(c.Updates(), sid)
	if st["w1"] != acp.ToolCallCompleted || st["e1"] != acp.ToolCallCompleted {
		t.Errorf("statuses %v", st)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "notes", "a.txt")); string(b) != "two\n" {
		t.Errorf("notes/a.txt = %q", b)
	}
	acptest.CheckSchema(t, c.Recorder)
}
