package instructions

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFrontMatter(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   map[string]string // scalar values
		nested []string          // non-scalar keys
		body   string
		errAt  int // 0: no error
	}{
		{name: "none", in: "# Title\ntext\n", body: "# Title\ntext\n"},
		{name: "plain", in: "---\nname: pdf\ndescription: Fill PDF forms # a comment\n---\nBody\n", want: map[string]string{"name": "pdf", "description": "Fill PDF forms"}, body: "Body\n"},
		{name: "crlf and bom", in: "\ufeff---\r\nname: x\r\n---\r\nB\r\n", want: map[string]string{"name": "x"}, body: "B\n"},
		{name: "quoted", in: "---\na: \"say \\\"hi\\\"\\n\"\nb: 'it''s: fine'\n---\n", want: map[string]string{"a": "say \"hi\"\n", "b": "it's: fine"}},
		{name: "literal block", in: "---\nd: |\n  line one\n  line two\nn: x\n---\n", want: map[string]string{"d": "line one\nline two\n", "n": "x"}},
		{name: "folded strip", in: "---\nd: >-\n  one\n  two\n\n  three\n---\n", want: map[string]string{"d": "one two\nthree"}},
		{name: "plain continued", in: "---\ndescription: Use when\n  the user asks\n---\n", want: map[string]string{"description": "Use when the user asks"}},
		{name: "nested and flow", in: "---\nmetadata:\n  author: me\n  v: 1\nallowed-tools: [Read, Grep]\nlist:\n  - a\nname: s\n---\n", want: map[string]string{"name": "s"}, nested: []string{"metadata", "allowed-tools", "list"}},
		{name: "empty value", in: "---\nhint:\n---\n", want: map[string]string{"hint": ""}},
		{name: "comments and blanks", in: "---\n# c\n\nname: a\n\n---\n", want: map[string]string{"name": "a"}},
		{name: "unclosed", in: "---\nname: a\n", errAt: 1},
		{name: "duplicate", in: "---\nname: a\nname: b\n---\n", errAt: 3},
		{name: "no colon", in: "---\njust text\n---\n", errAt: 2},
		{name: "no space", in: "---\nname:a\n---\n", errAt: 2},
		{name: "indented first", in: "---\n  name: a\n---\n", errAt: 2},
		{name: "tab", in: "---\n\tname: a\n---\n", errAt: 2},
		{name: "unterminated quote", in: "---\nname: \"a\n---\n", errAt: 2},
		{name: "text after quote", in: "---\nname: \"a\" b\n---\n", errAt: 2},
		{name: "anchor", in: "---\nname: &x a\n---\n", errAt: 2},
		{name: "bad escape", in: "---\nname: \"\\q\"\n---\n", errAt: 2},
		{name: "bad block header", in: "---\nd: |2x\n  a\n---\n", errAt: 2},
		{name: "invalid utf8", in: "---\nname: \xff\n---\n", errAt: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, err := ParseFrontMatter([]byte(tt.in))
			if tt.errAt > 0 {
				var fe *FrontMatterError
				if !errors.As(err, &fe) || fe.Line != tt.errAt {
					t.Fatalf("err = %v, want a FrontMatterError at line %d", err, tt.errAt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if body != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
			for k, want := range tt.want {
				got, ok, err := fm.String(k)
				if err != nil || !ok || got != want {
					t.Errorf("%s = %q, %v, %v; want %q", k, got, ok, err, want)
				}
			}
			for _, k := range tt.nested {
				if _, ok, err := fm.String(k); !ok || err == nil {
					t.Errorf("%s: ok %v err %v; want present and not a scalar", k, ok, err)
				}
			}
			if n := len(fm.Keys()); n != len(tt.want)+len(tt.nested) {
				t.Errorf("keys = %v", fm.Keys())
			}
		})
	}
}

func FuzzParseFrontMatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"---\nd: |\n  x\n   y\nm:\n  k: v\n---\n",
		"---\na: 'x''y'\nb: \"\\n\"\nc: >+\n  z\n\n---\n",
		"no front matter",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, body, err := ParseFrontMatter(data)
		if err != nil {
			var fe *FrontMatterError
			if !errors.As(err, &fe) || fe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, k := range fm.Keys() {
			if !fm.Has(k) {
				t.Fatalf("key %q listed but absent", k)
			}
			fm.String(k)
		}
		if len(fm.Keys()) == 0 && !strings.HasPrefix(strings.TrimPrefix(string(data), "\ufeff"), "---") && body != strings.ReplaceAll(strings.TrimPrefix(string(data), "\ufeff"), "\r\n", "\n") {
			t.Fatalf("body of a file without front matter changed: %q", body)
		}
	})
}
