package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseErrorsHavePositions(t *testing.T) {
	tests := []struct {
		name, data    string
		line, column  int
		wantSubstring string
	}{
		{"syntax", "{\n  \"model\": {\"name\": \"x\",}\n}", 2, 25, "invalid character"},
		{"unknown key", "{\n  \"permisions\": {}\n}", 2, 3, `unknown setting "permisions"`},
		{"wrong type", "{\n  \"maxTurnRequests\": \"ten\"\n}", 2, 26, "expected int"},
		{"truncated", "{\"model\": {", 1, 11, "unexpected EOF"},
		{"trailing", "{}\n{}", 2, 1, "unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.json", []byte(tt.data))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FileError", err)
			}
			if fe.Line != tt.line || fe.Column != tt.column {
				t.Errorf("position = %d:%d, want %d:%d (%v)", fe.Line, fe.Column, tt.line, tt.column, err)
			}
			if !strings.Contains(err.Error(), tt.wantSubstring) {
				t.Errorf("err = %q, want it to mention %q", err, tt.wantSubstring)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	s, err := Parse("s.json", []byte(`{"model":{"provider":"openai","name":"m"},
		"tools":{"deny":["bash"]},"permissions":{"defaultMode":"plan","allow":["read"]},
		"bash":{"maxTimeoutMs":1000},"maxTurnRequests":7}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model.Provider != "openai" || s.Tools.Deny[0] != "bash" || s.Permissions.DefaultMode != "plan" ||
		s.Bash.MaxTimeoutMs != 1000 || s.MaxTurnRequests != 7 {
		t.Fatalf("parsed %+v", s)
	}
	if s, err := Parse("empty.json", []byte("  \n")); err != nil || s.Model.Provider != "" {
		t.Fatalf("empty file: %+v, %v", s, err)
	}
}

func TestMergeOverridesScalarsAndAccumulatesLists(t *testing.T) {
	user := Settings{Model: Model{Provider: "openai", Name: "a"}, Permissions: Permissions{Deny: []string{"bash(rm *)"}, Allow: []string{"read"}}}
	project := Settings{Model: Model{Name: "b"}, Permissions: Permissions{Allow: []string{"read", "grep"}, DefaultMode: "acceptEdits"}}
	got := Merge(user, project)
	if got.Model.Provider != "openai" || got.Model.Name != "b" {
		t.Errorf("model = %+v", got.Model)
	}
	if fmt.Sprint(got.Permissions.Allow) != "[read grep]" || fmt.Sprint(got.Permissions.Deny) != "[bash(rm *)]" {
		t.Errorf("permissions = %+v", got.Permissions)
	}
	got.Permissions.Allow[0] = "changed"
	if user.Permissions.Allow[0] != "read" {
		t.Error("Merge aliases its input")
	}
}

func TestLoadLocatesBadValue(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	writeFile(t, p, "{\n  \"permissions\": {\n    \"allow\": [\"ok\", \"bad((\"]\n  }\n}\n")
	validate := func(s *Settings) error {
		for _, r := range s.Permissions.Allow {
			if strings.Contains(r, "((") {
				return &ValueError{Value: r, Err: errors.New("unbalanced parenthesis")}
			}
		}
		return nil
	}
	_, err := Load([]string{filepath.Join(dir, "missing.json"), p}, validate)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 || fe.Column != 21 {
		t.Fatalf("err = %v (%+v)", err, fe)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLiveReload edits the file in place, replaces it by rename as editors
// do, and writes an invalid version: valid changes apply, the invalid one
// keeps the last good settings.
func TestLiveReload(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	writeFile(t, p, `{"permissions":{"defaultMode":"default"}}`)
	live, err := NewLive([]string{p}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan Settings, 10)
	live.OnChange(func(s Settings) { changes <- s })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go live.Watch(ctx)
	<-live.Watching()

	wait := func(want string) {
		t.Helper()
		select {
		case s := <-changes:
			if s.Permissions.DefaultMode != want {
				t.Fatalf("reloaded mode %q, want %q", s.Permissions.DefaultMode, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no reload to %q", want)
		}
	}

	writeFile(t, p, `{"permissions":{"defaultMode":"plan"}}`)
	wait("plan")

	tmp := filepath.Join(dir, ".settings.json.swp")
	writeFile(t, tmp, `{"permissions":{"defaultMode":"acceptEdits"}}`)
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	wait("acceptEdits")

	writeFile(t, p, `{"permissions":{"defaultMode":`)
	if err := live.Reload(); err == nil {
		t.Fatal("Reload of an invalid file succeeded")
	}
	if got := live.Current().Permissions.DefaultMode; got != "acceptEdits" {
		t.Fatalf("after an invalid file mode = %q, want the last good acceptEdits", got)
	}
	writeFile(t, p, `{"permissions":{"defaultMode":"bypassPermissions"}}`)
	wait("bypassPermissions")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"model":{"provider":"openai"},"permissions":{"allow":["read"]}}`))
	f.Add([]byte("{\n\"x\": 1}"))
	f.Add([]byte(`{"maxTurnRequests": 1e999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("f.json", data)
		var fe *FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v is not a *FileError", err)
		}
		if fe != nil && (fe.Line < 0 || fe.Column < 0) {
			t.Fatalf("bad position %+v", fe)
		}
	})
}

func TestMergeSandbox(t *testing.T) {
	no, yes := false, true
	user, err := Parse("user.json", []byte(`{"sandbox": {"mode": "read-only", "network": false, "writableRoots": ["/a"], "required": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	project := Settings{Sandbox: Sandbox{Network: &yes, WritableRoots: []string{"/b"}, MCPServers: &yes}}
	got := Merge(user, project).Sandbox
	if got.Mode != "read-only" || *got.Network != true || *got.Required != true || *got.MCPServers != true || fmt.Sprint(got.WritableRoots) != "[/a /b]" {
		t.Errorf("merged sandbox = %+v", got)
	}
	// An explicit false overrides an earlier true; an unset value does not.
	got = Merge(project, Settings{Sandbox: Sandbox{Network: &no}}).Sandbox
	if *got.Network || !*got.MCPServers {
		t.Errorf("merged sandbox = %+v", got)
	}
	if _, err := Parse("bad.json", []byte(`{"sandbox": {"mod": "off"}}`)); err == nil || !strings.Contains(err.Error(), "unknown setting") {
		t.Errorf("misspelt sandbox key: %v", err)
	}
}

func TestMergeModelContextSettings(t *testing.T) {
	off := false
	user := Settings{Model: Model{ContextWindow: 100_000, Pricing: &Pricing{Input: 1, Output: 2}}}
	project := Settings{Model: Model{ContextWindow: 32_000, AutoCompact: &off}}
	got := Merge(Merge(Settings{}, user), project)
	if got.Model.ContextWindow != 32_000 || got.Model.Pricing == nil || got.Model.Pricing.Output != 2 || got.Model.AutoCompact == nil || *got.Model.AutoCompact {
		t.Errorf("merged %+v", got.Model)
	}
	user.Model.Pricing.Output = 9
	if got.Model.Pricing.Output != 2 {
		t.Error("merged settings alias a file's pricing")
	}
	s, err := Parse("s.json", []byte(`{"model":{"contextWindow":8192,"pricing":{"input":0.5,"output":1.5,"cacheRead":0.05,"cacheWrite":0.6},"autoCompact":false}}`))
	if err != nil || s.Model.ContextWindow != 8192 || *s.Model.Pricing != (Pricing{0.5, 1.5, 0.05, 0.6}) || *s.Model.AutoCompact {
		t.Errorf("parsed %+v, %v", s.Model, err)
	}
}

// TestProjectFileOnlyTightens: a repository's .dshd/settings.json cannot
// switch the OS sandbox off, widen it or make bypassPermissions the
// default; it can make the sandbox stricter. The user's file can do both.
func TestProjectFileOnlyTightens(t *testing.T) {
	tests := []struct {
		name, user, project string
		want                Sandbox
		wantMode            string
	}{
		{"off is ignored", `{}`, `{"sandbox":{"mode":"off"}}`, Sandbox{}, ""},
		{"read-only tightens", `{}`, `{"sandbox":{"mode":"read-only"}}`, Sandbox{Mode: "read-only"}, ""},
		{"back to workspace-write is ignored", `{"sandbox":{"mode":"read-only"}}`, `{"sandbox":{"mode":"workspace-write"}}`, Sandbox{Mode: "read-only"}, ""},
		{"network back is ignored", `{"sandbox":{"network":false}}`, `{"sandbox":{"network":true}}`, Sandbox{Network: ptr(false)}, ""},
		{"network off tightens", `{}`, `{"sandbox":{"network":false}}`, Sandbox{Network: ptr(false)}, ""},
		{"writable roots are ignored", `{"sandbox":{"writableRoots":["/u"]}}`, `{"sandbox":{"writableRoots":["/"]}}`, Sandbox{WritableRoots: []string{"/u"}}, ""},
		{"required stays", `{"sandbox":{"required":true}}`, `{"sandbox":{"required":false}}`, Sandbox{Required: ptr(true)}, ""},
		{"mcpServers stays sandboxed", `{"sandbox":{"mcpServers":true}}`, `{"sandbox":{"mcpServers":false}}`, Sandbox{MCPServers: ptr(true)}, ""},
		{"bypass default is ignored", `{"permissions":{"defaultMode":"plan"}}`, `{"permissions":{"defaultMode":"bypassPermissions"}}`, Sandbox{}, "plan"},
		{"other modes apply", `{}`, `{"permissions":{"defaultMode":"acceptEdits"}}`, Sandbox{}, "acceptEdits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			user := filepath.Join(dir, "config", "dshd", "settings.json")
			project := filepath.Join(dir, "repo", ".dshd", "settings.json")
			for p, data := range map[string]string{user: tt.user, project: tt.project} {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, data)
			}
			s, err := Load([]string{user, project}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Sandbox, tt.want) || s.Permissions.DefaultMode != tt.wantMode {
				t.Errorf("sandbox %+v mode %q, want %+v %q", s.Sandbox, s.Permissions.DefaultMode, tt.want, tt.wantMode)
			}
			// The same file as the user's own (or --config) loosens freely.
			other := filepath.Join(dir, "extra.json")
			writeFile(t, other, tt.project)
			if s, err := Load([]string{user, other}, nil); err != nil || s.Sandbox.Mode == "" && strings.Contains(tt.project, `"off"`) {
				t.Errorf("a trusted file saying %s: %+v, %v", tt.project, s.Sandbox, err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
