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

// TestProjectCommandsAndSkillsThroughTheBinary: the daemon finds the
// project's custom command and the user's skill ($XDG_CONFIG_HOME/dshd),
// advertises both, expands the command before the model sees the prompt,
// and its skill tool loads the skill.
func TestProjectCommandsAndSkillsThroughTheBinary(t *testing.T) {
	f := newFixture(t, script{Turns: []turn{
		{Match: `^Say hello to the world\.`, Responses: []response{{Text: "expanded"}}},
		{Responses: []response{
			{ToolCalls: []toolCall{{ID: "s1", Name: "skill", Arguments: map[string]any{"name": "greet"}}}},
			{Text: "done"},
		}},
	}})
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, ".dshd", "commands", "hello.md"), "---\ndescription: Greet someone\nargument-hint: <whom>\n---\nSay hello to $ARGUMENTS.\n")
	write(filepath.Join(f.home, ".config", "dshd", "skills", "greet", "SKILL.md"), "---\nname: greet\ndescription: How to greet people.\n---\nGREET-BODY: bow first.\n")
	p := f.start(t)
	c := &acptest.Client{}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})

	ctx := callCtx(t, 30*time.Second)
	resp, err := prompt(ctx, conn, sid, "/hello the world")
	if err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt: %+v %v", resp, err)
	}
	if got := agentText(c.Updates(), sid); !strings.Contains(got, "expanded") {
		t.Fatalf("the command was not expanded before the model (reply %q)", got)
	}
	var hello, greet bool
	for _, n := range c.Updates() {
		if u, ok := n.Update.Value.(*acp.AvailableCommandsUpdate); ok {
			for _, cmd := range u.AvailableCommands {
				hello = hello || cmd.Name == "hello" && cmd.Input != nil && cmd.Input.Hint == "<whom>"
				greet = greet || cmd.Name == "greet"
			}
		}
	}
	if !hello || !greet {
		t.Errorf("advertised: hello %v, greet %v", hello, greet)
	}

	if resp, err := prompt(ctx, conn, sid, "greet them"); err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt: %+v %v", resp, err)
	}
	loaded := false
	for _, n := range c.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == "s1" && u.Status != nil && *u.Status == acp.ToolCallCompleted {
			loaded = strings.Contains(string(u.RawOutput), "GREET-BODY: bow first.")
		}
	}
	if !loaded {
		t.Error("the skill tool did not load the user's skill")
	}
	if err := c.Recorder.Validate(acptest.SchemaOrSkip(t)); err != nil {
		t.Fatal(err)
	}
}
