package policy

import (
	"errors"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		text string
		want Rule
	}{
		{"read", Rule{Tool: "read"}},
		{"mcp__github__*", Rule{Tool: "mcp__github__*"}},
		{"*", Rule{Tool: "*"}},
		{"bash(go test *)", Rule{Tool: "bash", Pattern: "go test *", HasPattern: true}},
		{"bash(echo (hi))", Rule{Tool: "bash", Pattern: "echo (hi)", HasPattern: true}},
		{"edit(src/**)", Rule{Tool: "edit", Pattern: "src/**", HasPattern: true}},
		{"web-fetch(https://go.dev/*)", Rule{Tool: "web-fetch", Pattern: "https://go.dev/*", HasPattern: true}},
	}
	for _, tt := range tests {
		got, err := ParseRule(tt.text)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tt.text, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseRule(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
		if got.String() != tt.text {
			t.Errorf("ParseRule(%q).String() = %q", tt.text, got.String())
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	tests := []struct {
		text     string
		offset   int
		expected string
	}{
		{"", 0, "a tool name (letters, digits, '_', '-', '*')"},
		{"(x)", 0, "a tool name (letters, digits, '_', '-', '*')"},
		{"bash x", 4, "a tool name character, '(' or the end of the rule"},
		{"bash(", 5, "')' closing the pattern"},
		{"bash(go test", 12, "')' closing the pattern"},
		{"bash(x) ", 8, "')' closing the pattern"},
		{"bash()", 5, "a non-empty pattern"},
		{"bash(  )", 5, "a non-empty pattern"},
		{"bash.exe", 4, "a tool name character, '(' or the end of the rule"},
	}
	for _, tt := range tests {
		_, err := ParseRule(tt.text)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseRule(%q) error = %v, want *ParseError", tt.text, err)
			continue
		}
		if pe.Offset != tt.offset || pe.Expected != tt.expected {
			t.Errorf("ParseRule(%q) = offset %d, expected %q; want %d, %q", tt.text, pe.Offset, pe.Expected, tt.offset, tt.expected)
		}
	}
}

func TestParseRuleSetReportsEveryError(t *testing.T) {
	rs, err := ParseRuleSet([]string{"read", "bash("}, nil, []string{"", "bash(rm *)"})
	if err == nil {
		t.Fatal("no error")
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v does not wrap *ParseError", err)
	}
	want := "allow[1]: policy: rule \"bash(\": at offset 5: expected ')' closing the pattern\n" +
		"deny[0]: policy: rule \"\": at offset 0: expected a tool name (letters, digits, '_', '-', '*')"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if len(rs.Allow) != 1 || len(rs.Deny) != 1 {
		t.Errorf("valid rules kept: %+v", rs)
	}
}

func TestRuleText(t *testing.T) {
	var r Rule
	if err := r.UnmarshalText([]byte("bash(go test:*)")); err != nil {
		t.Fatal(err)
	}
	b, _ := r.MarshalText()
	if string(b) != "bash(go test:*)" {
		t.Errorf("MarshalText = %s", b)
	}
	if err := r.UnmarshalText([]byte("bash(")); err == nil {
		t.Error("UnmarshalText accepted an invalid rule")
	}
}

func TestMatchesTool(t *testing.T) {
	tests := []struct {
		glob, tool string
		want       bool
	}{
		{"read", "read", true},
		{"read", "reader", false},
		{"*", "anything", true},
		{"mcp__github__*", "mcp__github__create_issue", true},
		{"mcp__github__*", "mcp__gitlab__x", false},
		{"mcp__*__read", "mcp__fs__read", true},
		{"b*h", "bash", true},
		{"b*h", "bashx", false},
		{"**", "", true},
	}
	for _, tt := range tests {
		if got := (Rule{Tool: tt.glob}).MatchesTool(tt.tool); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.glob, tt.tool, got, tt.want)
		}
	}
}

func TestDecisionText(t *testing.T) {
	for _, d := range []Decision{None, Allow, Ask, Deny} {
		b, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Decision
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Errorf("round trip %v: %v %v", d, back, err)
		}
	}
	if Decision(9).String() != "Decision(9)" {
		t.Error(Decision(9).String())
	}
	if _, err := Decision(9).MarshalText(); err == nil {
		t.Error("marshalled an invalid decision")
	}
	var d Decision
	if err := d.UnmarshalText([]byte("maybe")); err == nil {
		t.Error("accepted maybe")
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"read", "bash(go test *)", "bash(", "()", "a(b)c)", "mcp__x__*", "edit(**/*.go)", "x(\n)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRule(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(text) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if r.String() != text {
			t.Fatalf("String() = %q, want %q", r.String(), text)
		}
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("reparse: %+v %v", again, err)
		}
	})
}

func TestParseClassRule(t *testing.T) {
	r, err := ParseRule("@edits(src/**)")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tool != ClassEdits || r.Pattern != "src/**" || r.String() != "@edits(src/**)" {
		t.Errorf("parsed %+v", r)
	}
	if !r.MatchesTool(ClassEdits) || r.MatchesTool("edit") || r.MatchesTool("write") {
		t.Error("a class rule matches only its class name")
	}
	for _, bad := range []string{"@", "@nope(x)", "@edit(x)", "a@b", "@@edits"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
}
