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
