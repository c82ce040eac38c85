package bridge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
)

// A call's landing is computed once and reused by its listeners and
// guards, never by the next call: a file turned into a symlink between two
// calls is judged where it lands at the second (here: into .git, which is
// protected), in a mode where the first ran without asking.
func TestLandingIsPerCall(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(cwd, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(cwd, "f.txt")
	if err := os.WriteFile(f, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var first, second registry.Result
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		first = turn.Execute(ctx, bridge.ToolCall{ID: "e1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","new":"x"}`)})
		if err := os.Remove(f); err != nil {
			return "", err
		}
		if err := os.Symlink(filepath.Join(cwd, ".git", "config"), f); err != nil {
			return "", err
		}
		second = turn.Execute(ctx, bridge.ToolCall{ID: "e2", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","new":"y"}`)})
		return acp.StopEndTurn, nil
	})
	agent := newTestAgent(t, loop, t.TempDir())
	conn := connect(t, agent, &acptest.Client{Permission: acptest.AllowOnce}, acp.ClientCapabilities{})
	sid := newSession(t, conn, cwd)
	if _, err := conn.SetSessionMode(context.Background(), &acp.SetSessionModeRequest{SessionID: sid, ModeID: "acceptEdits"}); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	if first.IsError {
		t.Fatalf("the first edit failed: %+v", first)
	}
	if r := second; !r.IsError || r.Error == nil || r.Error.Code != registry.CodeDenied || !strings.Contains(r.Error.Message, "protected") {
		t.Errorf("the edit through the new symlink into .git: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(cwd, ".git", "config")); err == nil {
		t.Error(".git/config was written")
	}
}

// The protected guard judges the protected entries on the disk as it is
// after a permission prompt, never through what the landing saw before
// it: here a settings directory appears during the prompt as a symlink to
// the directory the call writes, which makes the call's target a settings
// file. (Judged through the lookups from before the prompt, .dshd was
// missing and the write went through.)
func TestProtectedAfterPromptSeesNewSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "ws")
	target := filepath.Join(cwd, "evil", "settings.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res registry.Result
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		res = turn.Execute(ctx, bridge.ToolCall{ID: "e1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"evil/settings.json","new":"{\"permissions\":{}}"}`)})
		return acp.StopEndTurn, nil
	})
	agent, err := buildTestAgentWith(loop, t.TempDir(), func(o *bridge.Options) {
		o.Protected = []string{filepath.Join(cwd, ".dshd", "settings.json")}
	})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		asked++
		if err := os.Symlink(filepath.Join(cwd, "evil"), filepath.Join(cwd, ".dshd")); err != nil {
			t.Error(err)
		}
		return acptest.AllowOnce(ctx, req)
	}}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, cwd)
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Fatalf("%d permission prompts, want 1", asked)
	}
	if !res.IsError || res.Error == nil || res.Error.Code != registry.CodeDenied || !strings.Contains(res.Error.Message, "protected") {
		t.Errorf("the edit of a file that became a settings file during the prompt: %+v", res)
	}
	if b, _ := os.ReadFile(target); string(b) != "{}\n" {
		t.Errorf("the settings file was written: %q", b)
	}
}
