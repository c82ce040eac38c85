package presentation

import (
	"path/filepath"
	"testing"
)

func TestConsoleFallback(t *testing.T) {
	tests := []struct {
		name string
		card *TerminalCard
		want string
	}{
		{"nil card", nil, ""},
		{"success", &TerminalCard{Output: "ok\n", ExitCode: intPtr(0)}, "```console\nok\n```"},
		{"unknown end", &TerminalCard{Output: "ok\n"}, "```console\nok\n```"},
		{"failure", &TerminalCard{Output: "FAIL\n", ExitCode: intPtr(2)}, "```console\nFAIL\n```\n\nExited with code 2"},
		{"signal wins over code", &TerminalCard{Output: "", ExitCode: intPtr(137), Signal: "SIGKILL"}, "```console\n```\n\nKilled by signal SIGKILL"},
		{"no final newline", &TerminalCard{Output: "partial"}, "```console\npartial\n```"},
		{"output with fences", &TerminalCard{Output: "```go\nx\n````\n"}, "`````console\n```go\nx\n````\n`````"},
		{"CRLF kept", &TerminalCard{Output: "a\r\nb\r\n"}, "```console\na\r\nb\r\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConsoleFallback(tt.card); got != tt.want {
				t.Errorf("ConsoleFallback:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRelativePath(t *testing.T) {
	cwd := filepath.FromSlash("/work/proj")
	tests := []struct{ cwd, path, want string }{
		{cwd, "/work/proj/a.go", "a.go"},
		{cwd, "/work/proj/sub/dir/b.go", filepath.FromSlash("sub/dir/b.go")},
		{cwd, "/work/proj", "."},
		{cwd + "/", "/work/proj/a.go", "a.go"},
		{cwd, "/work/proj/../proj/a.go", "a.go"},
		{cwd, "/work/project/a.go", "/work/project/a.go"}, // a sibling sharing a prefix
		{cwd, "/work/other/a.go", "/work/other/a.go"},
		{cwd, "/etc/passwd", "/etc/passwd"},
		{cwd, "relative/a.go", "relative/a.go"},
		{"", "/work/proj/a.go", "/work/proj/a.go"},
		{"relative", "/work/proj/a.go", "/work/proj/a.go"},
		{"/", "/a.go", "a.go"},
		{cwd, "/work/proj/..foo", "..foo"}, // a name starting with dots is inside
	}
	for _, tt := range tests {
		if got := RelativePath(tt.cwd, filepath.FromSlash(tt.path)); got != filepath.FromSlash(tt.want) {
			t.Errorf("RelativePath(%q, %q) = %q, want %q", tt.cwd, tt.path, got, tt.want)
		}
	}
}

func TestRelativeTitle(t *testing.T) {
	const cwd = "/w/p"
	tests := []struct {
		title string
		paths []string
		want  string
	}{
		{"Edit /w/p/a.go", []string{"/w/p/a.go"}, "Edit a.go"},
		{"Move /w/p/a.go to /w/p/sub/b.go", []string{"/w/p/a.go", "/w/p/sub/b.go"}, "Move a.go to sub/b.go"},
		{"Read /etc/hosts", []string{"/etc/hosts"}, "Read /etc/hosts"},
		{"Copy /w/p/a.go to /tmp/a.go", []string{"/w/p/a.go", "/tmp/a.go"}, "Copy a.go to /tmp/a.go"},
		// A path that is a prefix of another one is not cut into it.
		{"Edit /w/p/a and /w/p/ab", []string{"/w/p/a", "/w/p/ab"}, "Edit a and ab"},
		{"Edit /w/p/a.go.bak", []string{"/w/p/a.go"}, "Edit /w/p/a.go.bak"},
		{"Edited /w/p/a.go.", []string{"/w/p/a.go"}, "Edited a.go."},
		{"List /w/p", []string{"/w/p"}, "List ."},
		{"List /w/p/sub/x", []string{"/w/p"}, "List /w/p/sub/x"},
		{"No paths", nil, "No paths"},
		{"Twice /w/p/a, /w/p/a", []string{"/w/p/a"}, "Twice a, a"},
	}
	for _, tt := range tests {
		if got := RelativeTitle(cwd, tt.title, tt.paths...); got != tt.want {
			t.Errorf("RelativeTitle(%q, %q) = %q, want %q", tt.title, tt.paths, got, tt.want)
		}
	}
}
