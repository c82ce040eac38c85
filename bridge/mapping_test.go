package bridge_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
)

// TestGoldenCardMapping maps every card kind for every terminal tier and
// capability combination and compares with testdata/mapping/*.json; each
// content block is validated against ToolCallContent and the final update
// against ToolCallUpdate.
func TestGoldenCardMapping(t *testing.T) {
	const cwd = "/ws/project"
	two, sig := 2, 0
	old := "a\nb\nc\n"
	plain := acp.ClientCapabilities{}
	withTerminal := acp.ClientCapabilities{Terminal: true}
	withMeta := acp.ClientCapabilities{Meta: json.RawMessage(`{"terminal_output":true}`)}
	withBoth := acp.ClientCapabilities{Terminal: true, Meta: json.RawMessage(`{"terminal_output":true}`)}
	diff := &presentation.DiffCard{Title: "Edit /ws/project/src/a.go and /elsewhere/b.go", Diffs: []presentation.FileDiff{
		{Path: "src/a.go", OldText: &old, NewText: "a\nB\nc\n", Line: 1},
		{Path: "/elsewhere/b.go", OldText: nil, NewText: "new file\n"},
	}}
	failed := &presentation.TerminalCard{Title: "go test ./...", Output: "--- FAIL: TestX\nFAIL\n", ExitCode: &two}
	killed := &presentation.TerminalCard{Title: "sleep 100", Output: "", ExitCode: nil, Signal: "SIGKILL"}
	ok := &presentation.TerminalCard{Title: "echo ```", Output: "```\n", ExitCode: &sig}
	generic := &presentation.GenericCard{Title: "Fetched /ws/project/docs", Content: []presentation.Content{
		presentation.Text("some text"),
		{Type: presentation.ContentImage, Data: "aGk=", MIMEType: "image/png"},
		{Type: presentation.ContentResourceLink, URI: "file:///ws/project/docs/a.md", Name: "a.md"},
		{Type: presentation.ContentResource, URI: "file:///ws/project/docs/b.md", Text: "# B", MIMEType: "text/markdown"},
	}}
	cases := []struct {
		name string
		caps acp.ClientCapabilities
		call bridge.CallState
		card presentation.Card
	}{
		{"diff", plain, bridge.CallState{ID: "c1"}, diff},
		{"diff_with_terminal_caps", withTerminal, bridge.CallState{ID: "c1"}, diff},
		{"terminal_tier1", withTerminal, bridge.CallState{ID: "c1", EditorTerminal: "term-7"}, failed},
		{"terminal_tier1_with_meta_too", withBoth, bridge.CallState{ID: "c1", EditorTerminal: "term-7"}, failed},
		{"terminal_tier2_streamed", withMeta, bridge.CallState{ID: "c1", Tier2: true, Streamed: true}, failed},
		{"terminal_tier2_not_streamed", withMeta, bridge.CallState{ID: "c1", Tier2: true}, failed},
		{"terminal_tier2_signal", withMeta, bridge.CallState{ID: "c1", Tier2: true, Streamed: true}, killed},
		{"terminal_tier3_failed", plain, bridge.CallState{ID: "c1"}, failed},
		{"terminal_tier3_signal", plain, bridge.CallState{ID: "c1"}, killed},
		{"terminal_tier3_backticks", plain, bridge.CallState{ID: "c1"}, ok},
		{"generic", plain, bridge.CallState{ID: "c1"}, generic},
		{"generic_empty", plain, bridge.CallState{ID: "c1"}, &presentation.GenericCard{}},
		{"generic_after_tier2_announce", withMeta, bridge.CallState{ID: "c1", Tier2: true}, &presentation.GenericCard{Content: []presentation.Content{presentation.Text("denied")}}},
	}
	v, schemaErr := acptest.LoadValidator()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := bridge.MapCardForTest(tc.caps, cwd, tc.call, tc.card)
			got, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			file := filepath.Join("testdata", "mapping", tc.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("mapping differs from %s (-update accepts):\n%s", file, got)
			}
			if schemaErr != nil {
				t.Skipf("ACP schema not available (%v)", schemaErr)
			}
			for i, c := range m.Content {
				if err := v.ValidateValue("ToolCallContent", c); err != nil {
					t.Errorf("content %d: %v", i, err)
				}
			}
			st := acp.ToolCallCompleted
			u := acp.ToolCallUpdate{ToolCallID: tc.call.ID, Status: &st, Content: m.Content, Locations: m.Locations, Meta: m.Meta}
			if m.Title != "" {
				u.Title = &m.Title
			}
			if err := v.ValidateValue("ToolCallUpdate", u); err != nil {
				t.Errorf("update: %v", err)
			}
		})
	}
}

// TestGoldenToolCallAnnouncement runs one call per case through a real
// turn and compares the tool_call that announced it with
// testdata/mapping/announce_*.json; the announcement is validated against
// the schema's ToolCall and, as sent, SessionUpdate.
func TestGoldenToolCallAnnouncement(t *testing.T) {
	const cwd = "/ws/project"
	plain := acp.ClientCapabilities{}
	withTerminal := acp.ClientCapabilities{Terminal: true}
	withMeta := acp.ClientCapabilities{Meta: json.RawMessage(`{"terminal_output":true}`)}
	withBoth := acp.ClientCapabilities{Terminal: true, Meta: json.RawMessage(`{"terminal_output":true}`)}
	cases := []struct {
		name string
		caps acp.ClientCapabilities
		tool string
		args string
	}{
		{"announce_read", plain, "read_file", `{"path":"/ws/project/src/a.go"}`},
		{"announce_read_escaping_cwd", plain, "read_file", `{"path":"/ws/project/../../etc/passwd"}`},
		{"announce_edit", plain, "edit_file", `{"path":"src/a.go","old":"a\n","new":"b\n"}`},
		{"announce_execute_tier1", withTerminal, "run", `{"command":"go test ./..."}`},
		{"announce_execute_tier2", withMeta, "run", `{"command":"go test ./...","output":"ok\n"}`},
		{"announce_execute_tier3", plain, "run", `{"command":"go test ./...","output":"ok\n"}`},
		// terminal wins over _meta.terminal_output: tier 1, no terminal_info.
		{"announce_execute_terminal_and_meta", withBoth, "run", `{"command":"go test ./..."}`},
	}
	v, schemaErr := acptest.LoadValidator()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loop := &scriptLoop{turns: [][]step{{{Call: &scriptCall{ID: "c1", Name: tc.tool, Arguments: json.RawMessage(tc.args)}}}}}
			client := &acptest.Client{}
			if tc.caps.Terminal {
				client.Terminals = &acptest.FakeTerminals{Script: map[string]acptest.FakeRun{"go test ./...": {Output: "ok\n"}}}
			}
			conn := connect(t, newTestAgent(t, loop, t.TempDir()), client, tc.caps)
			sid := newSession(t, conn, cwd)
			if _, err := prompt(conn, sid, "go"); err != nil {
				t.Fatal(err)
			}
			var announced *acp.ToolCall
			for _, n := range client.Updates() {
				if c, ok := n.Update.Value.(*acp.ToolCall); ok {
					if announced != nil {
						t.Fatalf("two tool_calls: %+v and %+v", announced, c)
					}
					announced = c
				}
			}
			if announced == nil {
				t.Fatal("no tool_call was sent")
			}
			wire, err := acp.SessionUpdate{Value: announced}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, wire, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			file := filepath.Join("testdata", "mapping", tc.name+".json")
			if *update {
				if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got.Bytes()) {
				t.Errorf("announcement differs from %s (-update accepts):\n%s", file, got.Bytes())
			}
			if schemaErr != nil {
				t.Skipf("ACP schema not available (%v)", schemaErr)
			}
			if err := v.ValidateValue("ToolCall", announced); err != nil {
				t.Errorf("tool_call: %v", err)
			}
			if err := v.ValidateDef("SessionUpdate", wire); err != nil {
				t.Errorf("tool_call as sent: %v", err)
			}
		})
	}
}

func TestRelTitle(t *testing.T) {
	cases := []struct{ name, cwd, in, want string }{
		{"inside", "/ws/p", "Edit /ws/p/main.go", "Edit main.go"},
		{"sibling sharing a name prefix", "/ws/p", "Edit /ws/pother/main.go", "Edit /ws/pother/main.go"},
		{"sibling p2", "/ws/p", "Read /ws/p2/a", "Read /ws/p2/a"},
		{"cwd not at a path start", "/ws/p", "Read /x/ws/p/a", "Read /x/ws/p/a"},
		{"cwd itself", "/ws/p", "List /ws/p", "List ."},
		{"cwd with a slash", "/ws/p", "List /ws/p/", "List ."},
		{"cwd with a dot", "/ws/p", "List /ws/p/.", "List ."},
		{"quoted", "/ws/p", "Move `/ws/p/a` to `/ws/p/b/c`", "Move `a` to `b/c`"},
		{"outside", "/ws/p", "Read /etc/hosts", "Read /etc/hosts"},
		{"no cwd", "", "Read /ws/p/a", "Read /ws/p/a"},
		{"root cwd", "/", "Read /a", "Read /a"},
		{"escapes by dot-dot", "/ws/p", "Read /ws/p/../../etc/passwd", "Read /etc/passwd"},
		{"escapes to a sibling", "/ws/p", "Read /ws/p/../p2/a", "Read /ws/p2/a"},
		{"escapes to the parent", "/ws/p", "List /ws/p/..", "List /ws"},
		{"dot-dot that stays inside", "/ws/p", "Read /ws/p/a/../b.go", "Read b.go"},
		{"dot-dot back into the cwd", "/ws/p", "Read /ws/p2/../p/a", "Read a"},
		{"double slash", "/ws/p", "Read /ws/p//a//b", "Read a/b"},
		{"double slash inside the cwd", "/ws/p", "Read /ws//p/a", "Read a"},
		{"dot segment", "/ws/p", "Read /ws/p/./a", "Read a"},
		{"line suffix", "/ws/p", "Read /ws/p/./a.go:12", "Read a.go:12"},
		{"unclean cwd", "/ws/p/", "Edit /ws/p/main.go", "Edit main.go"},
		{"unrelated path left alone", "/ws/p", "Read /etc//hosts and /ws/p/a", "Read /etc//hosts and a"},
	}
	for _, tc := range cases {
		if got := bridge.RelTitle(tc.cwd, tc.in); got != tc.want {
			t.Errorf("%s: relTitle(%q, %q) = %q, want %q", tc.name, tc.cwd, tc.in, got, tc.want)
		}
	}
}

func FuzzRelTitle(f *testing.F) {
	f.Add("/ws/p", "Edit /ws/p/main.go and /ws/p")
	f.Add("/a", "/a/a/a /a/")
	f.Add("/ws/p", "")
	f.Add("/ws/p", "Read /ws/p/../../etc/passwd and /ws//p/./a")
	f.Fuzz(func(t *testing.T, cwd, title string) {
		got := bridge.RelTitle(cwd, title)
		// Every path the title may rewrite names each element of the
		// cwd, so a title without the cwd's last element is left alone.
		if (cwd == "" || !strings.Contains(title, filepath.Base(filepath.Clean(cwd)))) && got != title {
			t.Fatalf("a title without the cwd must stay as it is: %q → %q", title, got)
		}
		if len(got) > len(title) {
			t.Fatalf("relativising grew the title: %q → %q", title, got)
		}
	})
}
