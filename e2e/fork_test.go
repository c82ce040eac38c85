package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// forkScript has several turns per prompt: the script provider takes the
// first turn its history has not used yet, so the call ids show whose
// history a session continues (c1 in the original, c2 in its fork, c3
// after the fork is reloaded).
func forkScript() script {
	var s script
	for i := 1; i <= 3; i++ {
		n := strconv.Itoa(i)
		s.Turns = append(s.Turns,
			turn{Match: "^cmd$", Responses: []response{
				{ToolCalls: []toolCall{{ID: "c" + n, Name: "bash", Arguments: map[string]any{"command": "go version"}}}},
				{Text: "ran " + n},
			}},
			turn{Match: "^edit$", Responses: []response{
				{ToolCalls: []toolCall{{ID: "e" + n, Name: "write", Arguments: map[string]any{"path": "fork" + n + ".txt", "content": n + "\n"}}}},
				{Text: "wrote " + n},
			}},
		)
	}
	return s
}

// callIDs are the tool call ids announced to sid.
func callIDs(updates []acp.SessionNotification, sid string) []string {
	var out []string
	for _, n := range updates {
		if u, ok := n.Update.Value.(*acp.ToolCall); ok && n.SessionID == sid {
			out = append(out, u.ToolCallID)
		}
	}
	return out
}

// TestFork forks a session through the real binary (session/fork is
// unstable ACP): the fork has the original's history (the model continues
// after the original's turns), its remembered rules (no ask for a command
// answered Always allow) and its mode, and its title says it is a fork;
// the original's log is unchanged; the fork is listed, and after the
// daemon is killed with SIGKILL a new daemon loads it on its own (replaying
// the original's turns and its own) and it still remembers.
func TestFork(t *testing.T) {
	f := newFixture(t, forkScript())
	f.withConfig(t, `{"permissions": {"remember": "session"}}`)
	ctx := callCtx(t, 2*time.Minute)
	p1 := f.start(t)
	asks := newAnswers(map[string]acptest.PermissionPolicy{"c1": acptest.AllowAlways})
	c1 := &acptest.Client{Permission: asks.policy}
	conn1 := p1.client(t, c1)
	init, err := conn1.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := init.AgentCapabilities.SessionCapabilities; sc == nil || sc.Fork == nil {
		t.Fatalf("sessionCapabilities.fork not advertised: %+v", sc)
	}
	orig, err := conn1.NewSession(ctx, &acp.NewSessionRequest{Cwd: f.ws, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(ctx, conn1, orig.SessionID, "cmd"); err != nil {
		t.Fatal(err)
	}
	setMode(t, conn1, orig.SessionID, "acceptEdits")
	origLog := filepath.Join(f.state, orig.SessionID+".jsonl")
	before, err := os.ReadFile(origLog)
	if err != nil {
		t.Fatal(err)
	}

	fork, err := conn1.ForkSession(ctx, &acp.ForkSessionRequest{SessionID: orig.SessionID, Cwd: f.ws})
	if err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	if fork.SessionID == orig.SessionID || fork.SessionID == "" {
		t.Fatalf("fork id %q", fork.SessionID)
	}
	if fork.Modes == nil || fork.Modes.CurrentModeID != "acceptEdits" {
		t.Errorf("the fork's mode is %+v, want the original's acceptEdits", fork.Modes)
	}
	for _, text := range []string{"cmd", "edit"} {
		if _, err := prompt(ctx, conn1, fork.SessionID, text); err != nil {
			t.Fatalf("%s in the fork: %v", text, err)
		}
	}
	if got := strings.Join(callIDs(c1.Updates(), fork.SessionID), " "); got != "c2 e1" {
		t.Errorf("the fork's calls are %q, want c2 e1 (the model continues after the original's turn)", got)
	}
	if asks.count("c2") != 0 || asks.count("e1") != 0 {
		t.Errorf("the fork asked for c2 %d times (remembered in the original) and for e1 %d times (acceptEdits)", asks.count("c2"), asks.count("e1"))
	}
	if after, _ := os.ReadFile(origLog); !bytes.Equal(before, after) {
		t.Errorf("forking changed the original's log:\nbefore %s\nafter  %s", before, after)
	}
	list, err := conn1.ListSessions(ctx, &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, s := range list.Sessions {
		if s.SessionID == fork.SessionID {
			listed = s.Title != nil && strings.HasSuffix(*s.Title, "(fork)")
		}
	}
	if !listed {
		t.Errorf("the fork is not listed with its title: %+v", list.Sessions)
	}
	acptest.CheckUnstableSchema(t, c1.Recorder)
	p1.kill()

	// A new daemon loads the fork on its own.
	asks2 := newAnswers(nil)
	c2 := &acptest.Client{Permission: asks2.policy}
	conn2 := f.start(t).client(t, c2)
	initialize(t, conn2)
	loaded, err := conn2.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: fork.SessionID, Cwd: f.ws, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatalf("session/load of the fork: %v", err)
	}
	if loaded.Modes == nil || loaded.Modes.CurrentModeID != "acceptEdits" {
		t.Errorf("reloaded fork's mode %+v", loaded.Modes)
	}
	if got := strings.Join(callIDs(c2.Updates(), fork.SessionID), " "); got != "c1 c2 e1" {
		t.Errorf("the fork's replay announces %q, want c1 c2 e1", got)
	}
	if _, err := prompt(ctx, conn2, fork.SessionID, "cmd"); err != nil {
		t.Fatal(err)
	}
	if ids := callIDs(c2.Updates(), fork.SessionID); ids[len(ids)-1] != "c3" || asks2.count("c3") != 0 {
		t.Errorf("after reload the fork ran %v and asked %d times, want c3 without asking", ids, asks2.count("c3"))
	}
	acptest.CheckUnstableSchema(t, c2.Recorder)
}
