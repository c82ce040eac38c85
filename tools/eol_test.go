package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLineEnding(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "\n"},
		{"one line", "\n"},
		{"a\nb\n", "\n"},
		{"a\r\nb\r\n", crlf},
		{"a\r\nb\r\nc\n", crlf}, // mostly CRLF
		{"a\nb\nc\r\n", "\n"},   // mostly LF
		{"a\r\nb\n", crlf},      // a tie keeps the CRLF
		{"a\rb\r", "\n"},        // old Mac endings are not CRLF
	} {
		if got := lineEnding(tc.text); got != tc.want {
			t.Errorf("lineEnding(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestWithLineEnding(t *testing.T) {
	for _, tc := range []struct{ in, eol, want string }{
		{"a\nb\r\nc", crlf, "a\r\nb\r\nc"},
		{"a\r\nb\n", "\n", "a\nb\n"},
		{"no break", crlf, "no break"},
		{"lone\rcr\n", crlf, "lone\rcr\r\n"},
	} {
		if got := withLineEnding(tc.in, tc.eol); got != tc.want {
			t.Errorf("withLineEnding(%q, %q) = %q, want %q", tc.in, tc.eol, got, tc.want)
		}
	}
}

func TestApplyEditsKeepsCRLF(t *testing.T) {
	crlfFile := "package f\r\n\r\nfunc A() int {\r\n\treturn 1\r\n}\r\n"
	for _, tc := range []struct {
		name, content string
		edit          Edit
		want          string
	}{
		{"LF edit of a CRLF file", crlfFile, Edit{Old: "func A() int {\n\treturn 1\n}", New: "func A() int {\n\treturn 2\n}\n\nfunc B() {}"},
			"package f\r\n\r\nfunc A() int {\r\n\treturn 2\r\n}\r\n\r\nfunc B() {}\r\n"},
		{"CRLF edit of a CRLF file", crlfFile, Edit{Old: "return 1\r\n}", New: "return 3\r\n}"},
			"package f\r\n\r\nfunc A() int {\r\n\treturn 3\r\n}\r\n"},
		{"single-line edit", crlfFile, Edit{Old: "return 1", New: "return 4"},
			"package f\r\n\r\nfunc A() int {\r\n\treturn 4\r\n}\r\n"},
		{"LF file stays LF", "a\nb\n", Edit{Old: "a\nb", New: "a\r\nc"}, "a\r\nc\n"},
		{"the LF part of a mostly CRLF file quoted exactly", "a\r\nb\r\nc\r\nx\ny\n", Edit{Old: "x\ny", New: "x\nz"}, "a\r\nb\r\nc\r\nx\nz\n"},
	} {
		got, n, err := ApplyEdits(tc.content, []Edit{tc.edit})
		if err != nil || n != 1 || got != tc.want {
			t.Errorf("%s: ApplyEdits = %q, %d, %v; want %q", tc.name, got, n, err, tc.want)
		}
	}
}

// Through the tools: edit and write keep a CRLF file CRLF on disk.
func TestFileToolsKeepCRLF(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "win.txt")
	hs := newHarness(t, dir, Options{})
	must(t, os.WriteFile(path, []byte("one\r\ntwo\r\nthree\r\n"), 0o644))

	if r := hs.run("edit", map[string]any{"path": "win.txt", "old": "two\nthree", "new": "2\n3\n4"}); r.IsError {
		t.Fatalf("edit: %q", text(r))
	}
	if b, _ := os.ReadFile(path); string(b) != "one\r\n2\r\n3\r\n4\r\n" {
		t.Errorf("after edit: %q", b)
	}
	if r := hs.run("write", map[string]any{"path": "win.txt", "content": "new\nlines\n"}); r.IsError {
		t.Fatalf("write: %q", text(r))
	}
	if b, _ := os.ReadFile(path); string(b) != "new\r\nlines\r\n" {
		t.Errorf("after write: %q", b)
	}
	// A new file is written as given.
	if r := hs.run("write", map[string]any{"path": "unix.txt", "content": "a\nb\n"}); r.IsError {
		t.Fatalf("write: %q", text(r))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "unix.txt")); string(b) != "a\nb\n" {
		t.Errorf("new file: %q", b)
	}
}
