package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

func undoScript() script {
	s := fileChangeScript()
	s.Turns = append(s.Turns,
		turn{Match: `ran /undo.*after-undo$`, Responses: []response{{Text: "the model was told"}}},
		turn{Match: `after-undo$`, Responses: []response{{Text: "the model was not told"}}},
	)
	return s
}

// lastText is the text sid's agent messages got since the count before.
func lastText(c *acptest.Client, sid string, before int) string {
	return agentText(c.Updates(), sid)[before:]
}

// TestUndo drives /undo through the real binary, after the daemon that
// made the changes was killed with SIGKILL and the session reloaded in a
// new one: /undo restores the last turn's edit and shows the diff as a
// card, the model is told at the next prompt, a file changed by someone
// else since is refused with nothing changed, and undoing the turn that
// created a file removes it.
func TestUndo(t *testing.T) {
	f := newFixture(t, undoScript())
	f.withConfig(t, `{"permissions": {"defaultMode": "acceptEdits"}}`)
	if err := os.MkdirAll(filepath.Join(f.ws, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(f.ws, "notes", "a.txt"), filepath.Join(f.ws, "notes", "b.txt")
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(data)
	}
	ctx := callCtx(t, 2*time.Minute)
	p1 := f.start(t)
	c1 := &acptest.Client{}
	conn1 := p1.client(t, c1)
	sid := open(t, conn1, f.ws, acp.ClientCapabilities{})
	for _, text := range []string{"write", "edit"} {
		if _, err := prompt(ctx, conn1, sid, text); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(a); got != "two\n" {
		t.Fatalf("a.txt = %q before undo", got)
	}
	if cmds := advertised(c1.Updates(), sid); !cmds["undo"] {
		t.Errorf("/undo not advertised: %v", cmds)
	}
	acptest.CheckSchema(t, c1.Recorder)
	p1.kill()

	c2 := &acptest.Client{}
	conn2 := f.start(t).client(t, c2)
	initialize(t, conn2)
	if _, err := conn2.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: f.ws, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	n := len(agentText(c2.Updates(), sid))
	if _, err := prompt(ctx, conn2, sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if got := read(a); got != "one\n" {
		t.Errorf("after /undo a.txt = %q, want the content before the last turn", got)
	}
	if reply := lastText(c2, sid, n); !strings.Contains(reply, "notes/a.txt restored") {
		t.Errorf("/undo replied %q", reply)
	}
	var card *acp.ToolCall
	for _, u := range c2.Updates() {
		if tc, ok := u.Update.Value.(*acp.ToolCall); ok && strings.HasPrefix(tc.Title, "Undo") {
			card = tc
		}
	}
	if card == nil || card.Kind != acp.ToolKindEdit || card.Status != acp.ToolCallCompleted || len(card.Content) == 0 {
		t.Fatalf("undo card %+v", card)
	}
	if d, ok := card.Content[0].Value.(*acp.ToolCallDiff); !ok || d.Path != a || d.NewText != "one\n" || d.OldText == nil || *d.OldText != "two\n" {
		t.Errorf("undo card content %+v", card.Content[0].Value)
	}
	n = len(agentText(c2.Updates(), sid))
	if _, err := prompt(ctx, conn2, sid, "after-undo"); err != nil {
		t.Fatal(err)
	}
	if reply := lastText(c2, sid, n); reply != "the model was told" {
		t.Errorf("after the undo the model answered %q", reply)
	}

	// Someone else changes b.txt after the agent wrote it: refused.
	if _, err := prompt(ctx, conn2, sid, "write-again"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n = len(agentText(c2.Updates(), sid))
	if _, err := prompt(ctx, conn2, sid, "/undo 2"); err != nil {
		t.Fatal(err)
	}
	if reply := lastText(c2, sid, n); !strings.Contains(reply, "Nothing was undone") || !strings.Contains(reply, "notes/b.txt: it was changed since by someone else") {
		t.Errorf("/undo over a changed file replied %q", reply)
	}
	if read(a) != "one\n" || read(b) != "mine\n" {
		t.Errorf("a refused undo changed files: a %q, b %q", read(a), read(b))
	}
	// Put b back as the agent left it: now the two turns undo, and the
	// file the first turn created is removed.
	if err := os.WriteFile(b, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(ctx, conn2, sid, "/undo 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Errorf("b.txt after undo: %v", err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("a.txt, created by the first turn, after undoing it: %v", err)
	}
	n = len(agentText(c2.Updates(), sid))
	if _, err := prompt(ctx, conn2, sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if reply := lastText(c2, sid, n); !strings.Contains(reply, "Nothing to undo") {
		t.Errorf("a third undo replied %q", reply)
	}
	acptest.CheckSchema(t, c2.Recorder)
}
