package bridge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

type replaceArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// replaceTool edits a real file through the host, as the built-in edit
// tool does: Preview computes the diff in memory, the body writes it. Both
// record the canonical arguments they were given.
func replaceTool(seen func(hook string, args json.RawMessage)) *registry.Definition {
	plan := func(ctx context.Context, call registry.Call, a replaceArgs) (abs, before, after string, err error) {
		h := call.Host()
		if h == nil {
			return "", "", "", os.ErrInvalid
		}
		l, err := h.Land(a.Path)
		if err != nil {
			return "", "", "", err
		}
		abs = l.Abs
		before, err = h.Files().ReadTextFile(ctx, l, 0, 0)
		if err != nil {
			return "", "", "", err
		}
		if !strings.Contains(before, a.Old) {
			return "", "", "", os.ErrNotExist
		}
		return abs, before, strings.Replace(before, a.Old, a.New, 1), nil
	}
	return mustDefine(registry.Define(registry.Spec[replaceArgs]{
		Name: "replace", Description: "Replace text in a file.", Kind: presentation.KindEdit,
		Subjects: func(_ registry.Call, a replaceArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: true}}
		},
		Preview: func(ctx context.Context, call registry.Call, a replaceArgs) (*presentation.ResultView, error) {
			seen("preview", call.Arguments())
			abs, before, after, err := plan(ctx, call, a)
			if err != nil {
				return nil, err
			}
			return &presentation.ResultView{Card: presentation.Hunks(abs, &before, &after).Card("Edit " + abs)}, nil
		},
	}, func(ctx context.Context, call registry.Call, a replaceArgs) (registry.Result, error) {
		seen("execute", call.Arguments())
		abs, before, after, err := plan(ctx, call, a)
		if err != nil {
			return registry.ErrorResult(registry.CodeToolError, err.Error()), nil
		}
		h := call.Host()
		l, err := h.Land(a.Path)
		if err != nil {
			return registry.Result{}, err
		}
		if err := h.Files().WriteTextFile(ctx, l, after); err != nil {
			return registry.Result{}, err
		}
		r := registry.TextResult("edited")
		r.View = &presentation.ResultView{Card: presentation.Hunks(abs, &before, &after).Card("Edit " + abs)}
		return r, nil
	}))
}

func diffsOf(content []acp.ToolCallContent) []*acp.ToolCallDiff {
	var out []*acp.ToolCallDiff
	for _, c := range content {
		if d, ok := c.Value.(*acp.ToolCallDiff); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestPermissionShowsPreview: an edit that asks shows its diff — computed
// by the tool's Preview through the host, before anything is written — in
// the permission request and on the call's card; the approved arguments
// are byte for byte what runs, even if the loop's buffer changes while
// the human decides; and for an uncontested edit the diff the user
// approved is the diff the result shows and the file holds.
func TestPermissionShowsPreview(t *testing.T) {
	for _, editor := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "editor"}[editor], func(t *testing.T) {
			cwd := t.TempDir()
			path := filepath.Join(cwd, "f.txt")
			const orig = "one\ntwo\nthree\n"
			if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := map[string]json.RawMessage{}
			record := func(hook string, args json.RawMessage) {
				mu.Lock()
				defer mu.Unlock()
				seen[hook] = append(json.RawMessage(nil), args...)
			}
			// Not canonical: blanks and key order differ from what runs.
			args := json.RawMessage(`{ "new": "TWO",  "path": "f.txt", "old": "two" }`)
			loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
				turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "replace", Arguments: args})
				return acp.StopEndTurn, nil
			})
			agent := newTestAgent(t, loop, t.TempDir())
			var asked *acp.RequestPermissionRequest
			client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
				asked = req
				if b, _ := os.ReadFile(path); string(b) != orig {
					t.Errorf("the file changed before the call was approved: %q", b)
				}
				// The loop scribbles over its buffer while the human decides.
				copy(args[strings.Index(string(args), "TWO"):], "BAD")
				return acptest.AllowOnce(ctx, req)
			}}
			caps := acp.ClientCapabilities{}
			var mem *acptest.MemFS
			if editor {
				mem = acptest.NewMemFS(map[string]string{path: orig})
				client.FS = mem
				caps.FS = &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
			}
			conn := connect(t, agent, client, caps)
			sid := newSession(t, conn, cwd)
			if err := agent.Registry().AddScoped(sid, replaceTool(record)); err != nil {
				t.Fatal(err)
			}
			if _, err := prompt(conn, sid, "edit"); err != nil {
				t.Fatal(err)
			}

			if asked == nil {
				t.Fatal("no permission request")
			}
			requested := diffsOf(asked.ToolCall.Content)
			if len(requested) != 1 || requested[0].Path != path || requested[0].OldText == nil || !strings.Contains(requested[0].NewText, "TWO") {
				t.Fatalf("permission request diffs %+v", requested)
			}
			if len(asked.ToolCall.Locations) != 1 || asked.ToolCall.Locations[0].Path != path || asked.ToolCall.Locations[0].Line == nil {
				t.Errorf("permission request locations %+v", asked.ToolCall.Locations)
			}
			var pending, final []*acp.ToolCallDiff
			for _, n := range client.Updates() {
				u, ok := n.Update.Value.(*acp.ToolCallUpdate)
				if !ok || len(u.Content) == 0 {
					continue
				}
				if u.Status == nil {
					pending = diffsOf(u.Content)
				} else if *u.Status == acp.ToolCallCompleted {
					final = diffsOf(u.Content)
				}
			}
			if !reflect.DeepEqual(pending, requested) {
				t.Errorf("card's pending diffs %+v, want the requested %+v", pending, requested)
			}
			if !reflect.DeepEqual(final, requested) {
				t.Errorf("result diffs %+v, want the approved %+v", final, requested)
			}

			mu.Lock()
			defer mu.Unlock()
			if want := `{"new":"TWO","path":"f.txt","old":"two"}`; string(seen["preview"]) != want || string(seen["execute"]) != want {
				t.Errorf("preview saw %s, execute saw %s; want both %s", seen["preview"], seen["execute"], want)
			}
			got := func() string {
				if editor {
					s, _ := mem.File(path)
					return s
				}
				b, _ := os.ReadFile(path)
				return string(b)
			}()
			if want := "one\nTWO\nthree\n"; got != want {
				t.Errorf("file %q, want %q", got, want)
			}
		})
	}
}

// TestFailingPreviewStillAsks: a preview that fails (the old text is not
// there) shows no diff, and the ask goes out as before.
func TestFailingPreviewStillAsks(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res registry.Result
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		res = turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "replace", Arguments: json.RawMessage(`{"path":"f.txt","old":"zzz","new":"y"}`)})
		return acp.StopEndTurn, nil
	})
	agent := newTestAgent(t, loop, t.TempDir())
	var asked *acp.RequestPermissionRequest
	client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		asked = req
		return acptest.AllowOnce(ctx, req)
	}}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, cwd)
	if err := agent.Registry().AddScoped(sid, replaceTool(func(string, json.RawMessage) {})); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(conn, sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if asked == nil {
		t.Fatal("no permission request")
	}
	if d := diffsOf(asked.ToolCall.Content); len(d) != 0 {
		t.Errorf("a failing preview showed diffs %+v", d)
	}
	if !strings.Contains(string(mustJSON(t, asked.ToolCall.Content)), "The call writes f.txt.") {
		t.Errorf("request content %s lacks the subject", mustJSON(t, asked.ToolCall.Content))
	}
	if !res.IsError {
		t.Errorf("the call did not fail on its own: %+v", res)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConfinementFollowsSymlinks: the roots guard judges the path the
// kernel would open (policy.Confine): reading through a dangling symlink
// that points out of the workspace asks (reads otherwise run freely), and
// a write through a symlink into .git is refused (policy.Protected).
func TestConfinementFollowsSymlinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(cwd, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"dangle": filepath.Join(outside, "new.txt"), "hooks": filepath.Join(cwd, ".git")} {
		if err := os.Symlink(target, filepath.Join(cwd, link)); err != nil {
			t.Fatal(err)
		}
	}
	results := map[string]registry.Result{}
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		results["read"] = turn.Execute(ctx, bridge.ToolCall{ID: "r", Name: "read_file", Arguments: json.RawMessage(`{"path":"dangle"}`)})
		results["edit"] = turn.Execute(ctx, bridge.ToolCall{ID: "e", Name: "edit_file", Arguments: json.RawMessage(`{"path":"hooks/pre-commit","new":"x"}`)})
		return acp.StopEndTurn, nil
	})
	agent := newTestAgent(t, loop, t.TempDir())
	var asked []string
	client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		asked = append(asked, string(mustJSON(t, req.ToolCall.Content)))
		return acptest.AllowOnce(ctx, req)
	}}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, cwd)
	if _, err := conn.SetSessionMode(context.Background(), &acp.SetSessionModeRequest{SessionID: sid, ModeID: "acceptEdits"}); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], filepath.Join(outside, "new.txt")) || !strings.Contains(asked[0], "outside the workspace") {
		t.Errorf("asks %q, want one naming %s as outside the workspace", asked, filepath.Join(outside, "new.txt"))
	}
	if r := results["edit"]; !r.IsError || r.Error == nil || r.Error.Code != registry.CodeDenied || !strings.Contains(r.Error.Message, "protected") {
		t.Errorf("write through a symlink into .git: %+v", r)
	}
}
