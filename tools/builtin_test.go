package tools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func TestBuiltinDefinitions(t *testing.T) {
	defs := Builtin(Options{})
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.PresentCall == nil || d.PresentResult == nil || d.Kind == "" {
			t.Errorf("%s: missing PresentCall, PresentResult or Kind", d.Name)
		}
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: parameters %s", d.Name, d.Parameters)
		}
		// Define compiles the schema only when a call is rejected.
		if _, err := registry.CompileSchema(d.Parameters); err != nil {
			t.Errorf("%s: the schema does not compile: %v", d.Name, err)
		}
	}
	want := []string{"read", "write", "edit", "glob", "grep", "bash", "bash_output", "bash_kill", "todo"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	for i := 1; i <= 30; i++ {
		long.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	files := map[string]string{
		"a.txt":    "alpha\nbeta\ngamma",
		"long.txt": long.String(),
		"wide.txt": strings.Repeat("x", 50) + "\n",
		"empty":    "",
		"bin":      "PNG\x00\x01\x02",
		"crlf.txt": "a\r\nb\r\n",
	}
	for n, c := range files {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644))
	}
	hs := newHarness(t, dir, Options{ReadLines: 10, MaxLineBytes: 20})
	first10, _, _ := NumberLines(long.String(), 1, 0, 0)
	first10 = first10[:strings.Index(first10, "    11\t")]
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"numbers", map[string]any{"path": "a.txt"}, "     1\talpha\n     2\tbeta\n     3\tgamma\n", false},
		{"absolute", map[string]any{"path": filepath.Join(dir, "a.txt"), "offset": 2, "limit": 1}, "     2\tbeta\n\n[Showing lines 2-2; the file continues. Call read with offset=3 to read further.]\n", false},
		{"limit to the end", map[string]any{"path": "a.txt", "offset": 2, "limit": 2}, "     2\tbeta\n     3\tgamma\n", false},
		{"default limit and notice", map[string]any{"path": "long.txt"}, first10 + "\n[Showing lines 1-10; the file continues. Call read with offset=11 to read further.]\n", false},
		{"page", map[string]any{"path": "long.txt", "offset": 29}, "    29\tline 29\n    30\tline 30\n", false},
		{"long line cut", map[string]any{"path": "wide.txt"}, "     1\txxxxxxxxxxxxxxxxxxxx… [line cut: 50 bytes]\n", false},
		{"crlf", map[string]any{"path": "crlf.txt"}, "     1\ta\n     2\tb\n", false},
		{"empty", map[string]any{"path": "empty"}, "(the file is empty)", false},
		{"past end", map[string]any{"path": "a.txt", "offset": 9}, "a.txt has fewer than 9 lines", true},
		{"missing", map[string]any{"path": "nope.txt"}, "nope.txt does not exist. Check the path; glob finds files by name.", true},
		{"directory", map[string]any{"path": "."}, ". is a directory, not a file; use glob to list its files.", true},
		{"binary", map[string]any{"path": "bin"}, "bin is a binary file (6 bytes); only text files can be read. Use bash (for example file, xxd or unzip -l) to inspect it.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hs.run("read", tt.args)
			if got := text(r); got != tt.want || r.IsError != tt.isError {
				t.Errorf("got %q (isError %v), want %q (%v)", got, r.IsError, tt.want, tt.isError)
			}
		})
	}
	if _, err := hs.defs["read"].Execute(hs.ctx, hs.call("read", nil), json.RawMessage(`{"path":"a.txt","offset":0}`)); err == nil {
		t.Error("offset 0 accepted")
	}
	if _, err := hs.defs["read"].Execute(hs.ctx, hs.call("read", nil), json.RawMessage(`{"PATH":"a.txt"}`)); err == nil {
		t.Error("misspelt key accepted")
	}
	v := hs.defs["read"].PresentCall(hs.call("read", map[string]any{"path": "a.txt", "offset": 2, "limit": 3}))
	if v.Title != "Read a.txt (lines 2-4)" || len(v.Locations) != 1 || v.Locations[0].Path != filepath.Join(dir, "a.txt") || *v.Locations[0].Line != 2 {
		t.Errorf("call view %+v", v)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	hs := newHarness(t, dir, Options{})
	args := map[string]any{"path": "new/dir/f.txt", "content": "one\ntwo\n"}
	r := hs.run("write", args)
	if r.IsError || text(r) != "Created new/dir/f.txt (2 lines, 8 bytes)." {
		t.Fatalf("create: %q", text(r))
	}
	abs := filepath.Join(dir, "new/dir/f.txt")
	if b, _ := os.ReadFile(abs); string(b) != "one\ntwo\n" {
		t.Fatalf("file %q", b)
	}
	card, ok := hs.view("write", args, r).Card.(*presentation.DiffCard)
	if !ok || len(card.Diffs) != 1 || card.Diffs[0].OldText != nil || card.Diffs[0].NewText != "one\ntwo\n" || card.Diffs[0].Path != abs {
		t.Fatalf("create card %+v", hs.view("write", args, r).Card)
	}

	r = hs.run("write", map[string]any{"path": abs, "content": "one\n2\n"})
	if text(r) != "Overwrote "+abs+" (2 lines, 6 bytes)." {
		t.Fatalf("overwrite: %q", text(r))
	}
	card = r.View.Card.(*presentation.DiffCard)
	if len(card.Diffs) != 1 || card.Diffs[0].OldText == nil || *card.Diffs[0].OldText != "one\ntwo\n" || card.Diffs[0].NewText != "one\n2\n" {
		t.Errorf("overwrite card %+v", card.Diffs)
	}
	subj := hs.defs["write"].Subjects(hs.call("write", map[string]any{"path": "x", "content": ""}))
	if len(subj) != 1 || subj[0] != (registry.Subject{Kind: registry.SubjectPath, Value: "x", Writes: true}) {
		t.Errorf("subjects %+v", subj)
	}
	if r := hs.run("write", map[string]any{"path": "new", "content": "x"}); !r.IsError {
		t.Error("wrote over a directory")
	}
}

func TestEdit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.go")
	orig := "package f\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n"
	hs := newHarness(t, dir, Options{})
	tests := []struct {
		name    string
		args    map[string]any
		want    string // file content after
		msg     string // substring of the result text
		isError bool
	}{
		{"single", map[string]any{"path": "f.go", "old": "func A() int { return 1 }", "new": "func A() int { return 2 }"},
			strings.Replace(orig, "A() int { return 1", "A() int { return 2", 1), "Edited f.go: 1 replacement, first change at line 1", false},
		{"not unique", map[string]any{"path": "f.go", "old": "return 1", "new": "return 3"},
			orig, "occurs 2 times (at lines 3, 5)", true},
		{"replace all", map[string]any{"path": "f.go", "old": "return 1", "new": "return 3", "replaceAll": true},
			strings.ReplaceAll(orig, "return 1", "return 3"), "2 replacements", false},
		{"missing with whitespace hint", map[string]any{"path": "f.go", "old": "func A()  int", "new": "x"},
			orig, "not found", true},
		{"multi atomic failure leaves file", map[string]any{"path": "f.go", "edits": []map[string]any{
			{"old": "func A", "new": "func AA"}, {"old": "nope", "new": "x"}}},
			orig, "edits[1].old was not found", true},
		{"multi applied in order", map[string]any{"path": "f.go", "edits": []map[string]any{
			{"old": "func A", "new": "func AA"}, {"old": "func AA", "new": "func C"}}},
			strings.Replace(orig, "func A", "func C", 1), "2 replacements", false},
		{"both forms", map[string]any{"path": "f.go", "old": "a", "new": "b", "edits": []map[string]any{{"old": "a", "new": "b"}}},
			orig, "either old/new or edits", true},
		{"neither form", map[string]any{"path": "f.go"}, orig, "give old and new", true},
		{"identical", map[string]any{"path": "f.go", "old": "package f", "new": "package f"}, orig, "identical", true},
		{"missing file", map[string]any{"path": "nope.go", "old": "a", "new": "b"}, orig, "does not exist", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, os.WriteFile(path, []byte(orig), 0o644))
			r := hs.run("edit", tt.args)
			if r.IsError != tt.isError || !strings.Contains(text(r), tt.msg) {
				t.Errorf("result %q (isError %v), want %q (%v)", text(r), r.IsError, tt.msg, tt.isError)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.want {
				t.Errorf("file\n%s\nwant\n%s", b, tt.want)
			}
		})
	}
	must(t, os.WriteFile(path, []byte(orig), 0o644))
	args := map[string]any{"path": "f.go", "old": "return 1 }\n\nfunc B", "new": "return 9 }\n\nfunc B"}
	r := hs.run("edit", args)
	card := hs.view("edit", args, r).Card.(*presentation.DiffCard)
	if len(card.Diffs) != 1 || card.Diffs[0].OldText == nil || card.Diffs[0].Line != 1 || !strings.Contains(card.Diffs[0].NewText, "return 9") {
		t.Errorf("edit card %+v", card.Diffs)
	}
}

func TestApplyEditsHints(t *testing.T) {
	content := "a\n\tb := 1\nc\n"
	_, _, err := ApplyEdits(content, []Edit{{Old: "    2\t\tb := 1", New: "x"}})
	if err == nil || !strings.Contains(err.Error(), "line-number prefixes") {
		t.Errorf("prefix hint missing: %v", err)
	}
	_, _, err = ApplyEdits(content, []Edit{{Old: "b := 1\nd", New: "x"}})
	if err == nil || !strings.Contains(err.Error(), "appears at line 2") {
		t.Errorf("line hint missing: %v", err)
	}
	if _, _, err := ApplyEdits(content, nil); err == nil {
		t.Error("no edits accepted")
	}
}

// A replaceAll that would multiply the file past MaxEditedBytes is refused
// before any memory is spent on it; growth up to the limit is fine.
func TestApplyEditsGrowthLimit(t *testing.T) {
	content := strings.Repeat("x\n", 1<<20) // 2 MiB, a million x's
	yes := true
	long := strings.Repeat("y", 100)
	_, _, err := ApplyEdits(content, []Edit{{Old: "x", New: long, ReplaceAll: &yes}})
	var ee *EditError
	if !errors.As(err, &ee) || ee.Count != 1<<20 || !strings.Contains(err.Error(), "over edit's limit of 64 MiB") {
		t.Fatalf("growth to ~100 MiB: %v", err)
	}
	out, n, err := ApplyEdits(content, []Edit{{Old: "x", New: "yy", ReplaceAll: &yes}})
	if err != nil || n != 1<<20 || len(out) != 3<<20 {
		t.Errorf("growth to 3 MiB: %d replacements, %d bytes, %v", n, len(out), err)
	}
}

func TestGlobAndGrepTools(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a.go":     "package a\n// TODO one\n",
		"sub/b.go": "package b\nx\n// TODO two\n",
		"c.md":     "TODO three\n",
	})
	hs := newHarness(t, dir, Options{GrepLimit: 2})
	r := hs.run("glob", map[string]any{"pattern": "**/*.go"})
	got := strings.Split(strings.TrimSpace(text(r)), "\n")
	slices.Sort(got)
	if !slices.Equal(got, []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "sub/b.go")}) {
		t.Errorf("glob %q", text(r))
	}
	if r := hs.run("glob", map[string]any{"pattern": "*.rs"}); text(r) != "No files found." {
		t.Errorf("empty glob %q", text(r))
	}
	r = hs.run("grep", map[string]any{"pattern": "todo", "ignoreCase": true, "glob": "*.go", "context": 1})
	if want := "a.go-1-package a\na.go:2:// TODO one\n--\nsub/b.go-2-x\nsub/b.go:3:// TODO two\n"; text(r) != want {
		t.Errorf("grep\n%s\nwant\n%s", text(r), want)
	}
	r = hs.run("grep", map[string]any{"pattern": "TODO", "filesOnly": true})
	if !strings.Contains(text(r), "[Capped at 2 files") {
		t.Errorf("capped grep %q", text(r))
	}
	r = hs.run("grep", map[string]any{"pattern": "TODO", "path": "sub/b.go"})
	if text(r) != "sub/b.go:3:// TODO two\n" {
		t.Errorf("single-file grep %q", text(r))
	}
	if r := hs.run("grep", map[string]any{"pattern": "(x"}); !r.IsError {
		t.Error("bad regexp not an error")
	}
	s := hs.defs["glob"].Subjects(hs.call("glob", map[string]any{"pattern": "/etc/**/*.conf"}))
	if len(s) != 1 || s[0].Value != "/etc" {
		t.Errorf("absolute glob subject %+v: confinement would not see /etc", s)
	}
	s = hs.defs["glob"].Subjects(hs.call("glob", map[string]any{"pattern": "../../**"}))
	if len(s) != 1 || s[0].Value != "../.." {
		t.Errorf("relative escaping glob subject %+v", s)
	}
}

func TestBashLocal(t *testing.T) {
	dir := t.TempDir()
	hs := newHarness(t, dir, Options{OutputLimit: 1000})
	args := map[string]any{"command": "pwd; echo oops >&2; exit 2", "description": "show dir"}
	r := hs.run("bash", args)
	if want := dir + "\noops\n[exit code 2]"; text(r) != want {
		t.Errorf("text %q, want %q", text(r), want)
	}
	card := hs.view("bash", args, r).Card.(*presentation.TerminalCard)
	if card.Output != dir+"\noops\n" || card.ExitCode == nil || *card.ExitCode != 2 || card.Title != "pwd; echo oops >&2; exit 2" {
		t.Errorf("card %+v", card)
	}
	if hs.h.started[0] != dir || hs.h.progress.String() != dir+"\noops\n" {
		t.Errorf("progress: started %v output %q", hs.h.started, hs.h.progress.String())
	}
	r = hs.run("bash", map[string]any{"command": "sleep 5", "timeout": 50})
	if !strings.Contains(text(r), "timed out after 50ms") {
		t.Errorf("timeout text %q", text(r))
	}
	subj := hs.defs["bash"].Subjects(hs.call("bash", map[string]any{"command": "rm -rf x"}))
	if len(subj) != 1 || subj[0] != (registry.Subject{Kind: registry.SubjectCommand, Value: "rm -rf x"}) {
		t.Errorf("subjects %+v", subj)
	}
	v := hs.defs["bash"].PresentCall(hs.call("bash", map[string]any{"command": "make\nmake test", "description": "build"}))
	if v.Title != "make …" || v.Kind != presentation.KindExecute || len(v.Content) != 1 {
		t.Errorf("call view %+v", v)
	}
}

// A timeout too large for a Duration is capped like any other, not
// overflowed into "no timeout".
func TestBashHugeTimeoutIsCapped(t *testing.T) {
	hs := newHarness(t, t.TempDir(), Options{BashMaxTimeout: 100 * time.Millisecond})
	r := hs.run("bash", map[string]any{"command": "sleep 5", "timeout": int64(10_000_000_000_000)})
	if !strings.Contains(text(r), "timed out after 100ms") {
		t.Errorf("text %q", text(r))
	}
}

// fakeTerminals stands in for editor terminals.
type fakeTerminals struct{ req host.TerminalRequest }

func (f *fakeTerminals) Run(ctx context.Context, req host.TerminalRequest) (*presentation.TerminalCard, error) {
	f.req = req
	code := 1
	return &presentation.TerminalCard{Output: "from editor\n", ExitCode: &code, TerminalID: "term-7"}, nil
}

func TestBashEditorTerminal(t *testing.T) {
	dir := t.TempDir()
	hs := newHarness(t, dir, Options{OutputLimit: 123, Env: []string{"A=1", "B=x=y", "junk"}})
	ft := &fakeTerminals{}
	hs.h.terms = ft
	r := hs.run("bash", map[string]any{"command": "make"})
	if text(r) != "from editor\n[exit code 1]" {
		t.Errorf("text %q", text(r))
	}
	card := r.View.Card.(*presentation.TerminalCard)
	if card.TerminalID != "term-7" || card.Title != "make" {
		t.Errorf("card %+v", card)
	}
	if ft.req.Command != "make" || ft.req.Cwd != dir || ft.req.OutputLimit != 123 || ft.req.CallID != "call-1" {
		t.Errorf("request %+v", ft.req)
	}
	if !maps.Equal(ft.req.Env, map[string]string{"A": "1", "B": "x=y"}) {
		t.Errorf("the configured environment reached the terminal as %v", ft.req.Env)
	}
	if len(hs.h.started) != 0 {
		t.Error("local progress used with editor terminals")
	}
}

func TestTodo(t *testing.T) {
	hs := newHarness(t, t.TempDir(), Options{})
	r := hs.run("todo", map[string]any{"todos": []map[string]any{
		{"content": "write tests", "status": "completed", "priority": "high"},
		{"content": "fix bug", "status": "in_progress"},
		{"content": "ship", "status": "pending", "priority": "low"},
	}})
	if text(r) != "Plan updated: 3 tasks (1 completed, 1 in progress, 1 pending)." {
		t.Errorf("text %q", text(r))
	}
	want := []host.PlanEntry{
		{Content: "write tests", Priority: "high", Status: "completed"},
		{Content: "fix bug", Priority: "medium", Status: "in_progress"},
		{Content: "ship", Priority: "low", Status: "pending"},
	}
	if !slices.Equal(hs.h.plan, want) {
		t.Errorf("plan %+v", hs.h.plan)
	}
	if _, err := hs.defs["todo"].Execute(hs.ctx, hs.call("todo", nil), json.RawMessage(`{"todos":[{"content":"x","status":"done"}]}`)); err == nil {
		t.Error("bad status accepted")
	}
}

func TestNoHost(t *testing.T) {
	for _, d := range Builtin(Options{}) {
		args := map[string]json.RawMessage{
			"read": []byte(`{"path":"x"}`), "write": []byte(`{"path":"x","content":""}`), "edit": []byte(`{"path":"x","old":"a","new":"b"}`),
			"glob": []byte(`{"pattern":"*"}`), "grep": []byte(`{"pattern":"x"}`), "bash": []byte(`{"command":"true"}`),
			"bash_output": []byte(`{"id":"x"}`), "bash_kill": []byte(`{"id":"x"}`), "todo": []byte(`{"todos":[]}`),
		}[d.Name]
		r, err := d.Execute(context.Background(), &fakeCall{name: d.Name, args: args}, args)
		if err != nil || !r.IsError {
			t.Errorf("%s without a host: %+v %v", d.Name, r, err)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}
