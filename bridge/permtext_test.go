package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// TestPermissionRequestsArePlainAndComplete: clients show permission texts
// as plain text, and key the request's card on its kind. Every request
// carries the call's kind, title and locations as announced; it shows the
// exact command even when the call has a description; option names are
// plain sentences; a read-only command is not said to change anything;
// and a refused call's card says why without the pipeline's internal
// names.
func TestPermissionRequestsArePlainAndComplete(t *testing.T) {
	type shArgs struct {
		Command     string  `json:"command"`
		Description *string `json:"description,omitempty"`
	}
	sh := mustDefine(registry.Define(registry.Spec[shArgs]{
		Name: "sh", Description: "Run a command.", Kind: presentation.KindExecute,
		PresentCall: func(_ registry.Call, a shArgs) presentation.CallView {
			v := presentation.CallView{Title: a.Command}
			if a.Description != nil {
				v.Content = []presentation.Content{presentation.Text(*a.Description)}
			}
			return v
		},
		Subjects: func(_ registry.Call, a shArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectCommand, Value: a.Command}}
		},
	}, func(context.Context, registry.Call, shArgs) (registry.Result, error) {
		return registry.TextResult("ok"), nil
	}))
	reg := registry.New()
	if err := reg.SetGlobal(append(testTools(), sh)...); err != nil {
		t.Fatal(err)
	}
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "sh", Arguments: json.RawMessage(`{"command":"git status --short","description":"Show what changed"}`)})
		turn.Execute(ctx, bridge.ToolCall{ID: "c2", Name: "edit_file", Arguments: json.RawMessage(`{"path":"main.go","old":"a\n","new":"b\n"}`)})
		turn.Execute(ctx, bridge.ToolCall{ID: "c3", Name: "read_file", Arguments: json.RawMessage(`{"path":"/etc/hosts"}`)})
		return acp.StopEndTurn, nil
	})
	agent := bridge.New(bridge.Options{
		Loop: loop, Registry: reg, StateDir: t.TempDir(), Logger: discardLogger(),
		AgentInfo: acp.Implementation{Name: "dshd-test", Version: "0.0.0"},
	})
	var mu sync.Mutex
	var asked []*acp.RequestPermissionRequest
	client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		return acptest.RejectOnce(ctx, req)
	}}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 3 {
		t.Fatalf("%d permission requests, want 3", len(asked))
	}
	announced := map[string]*acp.ToolCall{}
	for _, n := range client.Updates() {
		if tc, ok := n.Update.Value.(*acp.ToolCall); ok {
			announced[tc.ToolCallID] = tc
		}
	}
	for _, req := range asked {
		tc := req.ToolCall
		a := announced[tc.ToolCallID]
		if a == nil {
			t.Fatalf("request for %s, which was not announced", tc.ToolCallID)
		}
		if tc.Kind == nil || *tc.Kind != a.Kind || tc.Title == nil || *tc.Title != a.Title {
			t.Errorf("request %s: kind %v title %v, announced %q %q", tc.ToolCallID, tc.Kind, tc.Title, a.Kind, a.Title)
		}
		if len(a.Locations) > 0 && len(tc.Locations) == 0 {
			t.Errorf("request %s has no locations; the card has %+v", tc.ToolCallID, a.Locations)
		}
		text := string(mustJSON(t, tc.Content))
		for _, o := range req.Options {
			text += "\n" + o.Name
			if strings.ContainsAny(o.Name, "`*") || strings.Contains(o.Name, "./") || strings.Contains(o.Name, "…") {
				t.Errorf("option name %q is not a plain sentence", o.Name)
			}
		}
		if strings.Contains(text, "changes the workspace") {
			t.Errorf("request %s says the call changes the workspace:\n%s", tc.ToolCallID, text)
		}
		if tc.ToolCallID == "c1" {
			if !strings.Contains(text, "$ git status --short") || !strings.Contains(text, "Show what changed") {
				t.Errorf("the request for a described command does not show both the description and the command:\n%s", text)
			}
			if !strings.Contains(text, "Always allow commands starting with git status") {
				t.Errorf("options:\n%s", text)
			}
		}
	}
	// The refused calls' cards.
	for _, n := range client.Updates() {
		u, ok := n.Update.Value.(*acp.ToolCallUpdate)
		if !ok || u.Status == nil || *u.Status != acp.ToolCallFailed {
			continue
		}
		text := string(mustJSON(t, u.Content))
		if strings.Contains(text, "bridge/") || strings.Contains(text, "denied by") || !strings.Contains(text, "Not run") {
			t.Errorf("the card of refused call %s shows %s", u.ToolCallID, text)
		}
	}
	acptest.CheckSchema(t, client.Recorder)
}

// TestModeReplyPunctuation: "/mode" answers with the mode's name and
// description as sentences, without doubled punctuation.
func TestModeReplyPunctuation(t *testing.T) {
	client := &acptest.Client{}
	conn := connect(t, newTestAgent(t, &scriptLoop{}, t.TempDir()), client, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "/mode acceptEdits"); err != nil {
		t.Fatal(err)
	}
	var reply string
	for _, n := range client.Updates() {
		if c, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
			reply += c.Content.Value.(*acp.TextContent).Text
		}
	}
	if want := "Mode: Accept edits. File edits inside the workspace run without asking; commands and anything outside the workspace still ask."; reply != want {
		t.Errorf("reply %q, want %q", reply, want)
	}
}
