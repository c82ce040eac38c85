package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestRememberedAcrossDaemons: an Always allow is remembered for the
// project, so a second daemon started in the same project does not ask
// again (also after the first one was killed with SIGKILL), /permissions
// lists the answer, and after /revoke the daemon asks again. A configured
// deny still beats the remembered allow, and a damaged file is reported,
// ignored and kept.
func TestRememberedAcrossDaemons(t *testing.T) {
	s := fileChangeScript()
	s.Turns = append(s.Turns, turn{Match: "^secret$", Responses: []response{
		{ToolCalls: []toolCall{{ID: "s1", Name: "write", Arguments: map[string]any{"path": "notes/secret.txt", "content": "x\n"}}}},
		{Text: "tried"},
	}})
	f := newFixture(t, s)
	f.withConfig(t, `{"permissions": {"deny": ["write(notes/secret*)"]}}`)
	if err := os.MkdirAll(filepath.Join(f.ws, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := callCtx(t, 2*time.Minute)
	file := filepath.Join(f.ws, ".dshd", "settings.local.json")

	// Daemon 1: Always allow on the write, remembered in the project.
	p1 := f.start(t)
	asks1 := newAnswers(map[string]acptest.PermissionPolicy{"w1": acptest.AllowAlways})
	c1 := &acptest.Client{Permission: asks1.policy}
	conn1 := p1.client(t, c1)
	sid1 := open(t, conn1, f.ws, acp.ClientCapabilities{})
	if _, err := prompt(ctx, conn1, sid1, "write"); err != nil {
		t.Fatal(err)
	}
	if asks1.count("w1") != 1 {
		t.Fatalf("the write asked %d times", asks1.count("w1"))
	}
	names := strings.Join(asks1.names["w1"], " | ")
	if !strings.Contains(names, "Always allow") || !strings.Contains(names, "in this project") {
		t.Errorf("option names %q do not say the project scope", names)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), `"@edits(`+filepath.Join(f.ws, "notes")+`/**)"`) {
		t.Fatalf("%s = %s, %v", file, b, err)
	}
	if ig, err := os.ReadFile(filepath.Join(f.ws, ".dshd", ".gitignore")); err != nil || !strings.Contains(string(ig), "settings.local.json\n") {
		t.Errorf(".dshd/.gitignore = %q, %v", ig, err)
	}
	acptest.CheckSchema(t, c1.Recorder)
	p1.kill() // SIGKILL: the answer is on disk already

	// Daemon 2: the same project; the edit does not ask.
	p2 := f.start(t)
	asks2 := newAnswers(nil)
	c2 := &acptest.Client{Permission: asks2.policy}
	conn2 := p2.client(t, c2)
	sid2 := open(t, conn2, f.ws, acp.ClientCapabilities{})
	if _, err := prompt(ctx, conn2, sid2, "edit"); err != nil {
		t.Fatal(err)
	}
	if n := asks2.count("e1"); n != 0 {
		t.Errorf("the second daemon asked %d times for an edit answered Always allow in the first", n)
	}
	if st := toolStatuses(c2.Updates(), sid2); st["e1"] != acp.ToolCallCompleted {
		t.Errorf("edit ended %q", st["e1"])
	}
	// A configured deny beats the remembered allow.
	if _, err := prompt(ctx, conn2, sid2, "secret"); err != nil {
		t.Fatal(err)
	}
	if st := toolStatuses(c2.Updates(), sid2); st["s1"] != acp.ToolCallFailed || asks2.count("s1") != 0 {
		t.Errorf("write of a denied file ended %q after %d asks, want failed without asking", st["s1"], asks2.count("s1"))
	}
	if _, err := os.Stat(filepath.Join(f.ws, "notes", "secret.txt")); err == nil {
		t.Error("the denied file was written")
	}
	before := len(agentText(c2.Updates(), sid2))
	if _, err := prompt(ctx, conn2, sid2, "/permissions"); err != nil {
		t.Fatal(err)
	}
	listing := agentText(c2.Updates(), sid2)[before:]
	if !strings.Contains(listing, "1. allow `@edits("+filepath.Join(f.ws, "notes")+"/**)` in this project") {
		t.Errorf("/permissions:\n%s", listing)
	}
	if _, err := prompt(ctx, conn2, sid2, "/revoke 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(ctx, conn2, sid2, "write-again"); err != nil {
		t.Fatal(err)
	}
	if n := asks2.count("w2"); n != 1 {
		t.Errorf("after /revoke the write asked %d times, want 1", n)
	}
	if cmds := advertised(c2.Updates(), sid2); !cmds["permissions"] || !cmds["revoke"] {
		t.Errorf("advertised commands %v", cmds)
	}
	acptest.CheckSchema(t, c2.Recorder)

	// A damaged file: reported when a session starts, ignored (the edit
	// asks), and kept aside by the next answer.
	damaged := []byte(`{"permissions": {"allow": ["@edits(` + filepath.Join(f.ws, "notes") + `/**)"`)
	if err := os.WriteFile(file, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	asks3 := newAnswers(map[string]acptest.PermissionPolicy{"e1": acptest.AllowAlways})
	c3 := &acptest.Client{Permission: asks3.policy}
	conn3 := f.start(t).client(t, c3)
	sid3 := open(t, conn3, f.ws, acp.ClientCapabilities{})
	if err := os.WriteFile(filepath.Join(f.ws, "notes", "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(ctx, conn3, sid3, "edit"); err != nil {
		t.Fatal(err)
	}
	if n := asks3.count("e1"); n != 1 {
		t.Errorf("with a damaged file the edit asked %d times, want 1", n)
	}
	if text := agentText(c3.Updates(), sid3); !strings.Contains(text, "remembered permissions ignored") || !strings.Contains(text, "kept as") {
		t.Errorf("the damage was not reported: %q", text)
	}
	kept, _ := filepath.Glob(file + ".damaged-*")
	if len(kept) != 1 {
		t.Fatalf("kept copies %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); string(b) != string(damaged) {
		t.Errorf("kept copy %q", b)
	}
	acptest.CheckSchema(t, c3.Recorder)
}

// advertised is the set of slash commands last advertised to sid.
func advertised(updates []acp.SessionNotification, sid string) map[string]bool {
	out := map[string]bool{}
	for _, n := range updates {
		if u, ok := n.Update.Value.(*acp.AvailableCommandsUpdate); ok && n.SessionID == sid {
			clear(out)
			for _, c := range u.AvailableCommands {
				out[c.Name] = true
			}
		}
	}
	return out
}
