package gitignore

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		name  string
		rules string
		path  string
		isDir bool
		want  Result
	}{
		{"basename any depth", "*.log", "a/b/c.log", false, Ignored},
		{"basename root", "*.log", "c.log", false, Ignored},
		{"no match", "*.log", "c.txt", false, NoMatch},
		{"comment", "#*.log", "c.log", false, NoMatch},
		{"escaped hash", `\#x`, "#x", false, Ignored},
		{"negation last wins", "*.log\n!keep.log", "keep.log", false, Included},
		{"negation then re-ignore", "*.log\n!keep.log\nkeep.log", "keep.log", false, Ignored},
		{"escaped bang", `\!x`, "!x", false, Ignored},
		{"dir only matches dir", "build/", "build", true, Ignored},
		{"dir only skips file", "build/", "build", false, NoMatch},
		{"dir only nested", "build/", "src/build", true, Ignored},
		{"anchored leading slash", "/build", "build", true, Ignored},
		{"anchored leading slash not nested", "/build", "src/build", true, NoMatch},
		{"inner slash anchors", "doc/frotz", "doc/frotz", false, Ignored},
		{"inner slash anchors not nested", "doc/frotz", "a/doc/frotz", false, NoMatch},
		{"leading doublestar", "**/foo", "a/b/foo", false, Ignored},
		{"leading doublestar root", "**/foo", "foo", false, Ignored},
		{"trailing doublestar", "abc/**", "abc/x/y", false, Ignored},
		{"trailing doublestar not self", "abc/**", "abc", true, NoMatch},
		{"middle doublestar zero", "a/**/b", "a/b", false, Ignored},
		{"middle doublestar many", "a/**/b", "a/x/y/b", false, Ignored},
		{"star not slash", "a/*.go", "a/b/c.go", false, NoMatch},
		{"question", "?.txt", "a.txt", false, Ignored},
		{"class negated", "[!a].txt", "b.txt", false, Ignored},
		{"class negated miss", "[!a].txt", "a.txt", false, NoMatch},
		{"trailing spaces trimmed", "x.txt   ", "x.txt", false, Ignored},
		{"escaped trailing space kept", `x\ `, "x ", false, Ignored},
		{"crlf", "x.txt\r\n", "x.txt", false, Ignored},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(strings.NewReader(tt.rules))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Match(tt.path, tt.isDir); got != tt.want {
				t.Errorf("Match(%q, %v) with %q = %v, want %v", tt.path, tt.isDir, tt.rules, got, tt.want)
			}
		})
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"*.go", "a/main.go", false},
		{"src/**/*.ts", "src/x.ts", true},
		{"src/**/*.ts", "src/a/b/x.ts", true},
		{"src/**/*.ts", "lib/x.ts", false},
		{"**", "anything/at/all", true},
	}
	for _, tt := range tests {
		if got := MatchPath(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestStack(t *testing.T) {
	root, _ := Parse(strings.NewReader("*.log\nvendor/\n"))
	sub, _ := Parse(strings.NewReader("!important.log\n"))
	var s *Stack
	s = s.Push("/r", root)
	s2 := s.Push("/r/sub", sub)
	if !s2.Ignored("/r/a.log", false) {
		t.Error("root rule lost")
	}
	if s2.Ignored("/r/sub/important.log", false) {
		t.Error("deeper negation must win")
	}
	if !s.Ignored("/r/sub/important.log", false) {
		t.Error("Push must not change the receiver")
	}
	if !s2.Ignored("/r/x/vendor", true) {
		t.Error("dir rule")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("*.log\n!keep.log\n/build/\na/**/b\n[!x]y\n", "a/x/b")
	f.Add(`\#a\ `, "#a ")
	f.Fuzz(func(t *testing.T, rules, p string) {
		m, err := Parse(strings.NewReader(rules))
		if err != nil {
			return
		}
		m.Match(p, false)
		m.Match(p, true)
	})
}
