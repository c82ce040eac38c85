package policy

import (
	"fmt"
	"strings"
)

// Rule is one parsed permission rule: `tool` or `tool(pattern)`.
type Rule struct {
	// Tool is the tool-name glob.
	Tool string
	// Pattern is the subject pattern; meaningful only when HasPattern.
	Pattern string
	// HasPattern distinguishes `tool` from `tool(pattern)`.
	HasPattern bool
}

// ClassEdits is the rule name of the class of every call that changes
// files: a call whose kind is edit, delete or move and whose subjects are
// all paths (write, edit and any file-changing tool added later). A rule
// `@edits(src/**)` covers them all, so an "Always allow" answered for a
// write also covers an edit of the same file. Rule names starting with `@`
// cannot be tool names (a tool name never has one), so a class never
// shadows a tool. The caller decides which calls belong to the class and
// evaluates them under the class name as well as under their tool's name
// (see the package documentation, "Classes").
const ClassEdits = "@edits"

// IsClass reports whether name is a rule class such as [ClassEdits].
func IsClass(name string) bool { return name == ClassEdits }

// ParseError is the error of [ParseRule]: where in the rule text parsing
// failed and what was expected there.
type ParseError struct {
	// Rule is the text being parsed.
	Rule string
	// Offset is the byte offset of the problem in Rule.
	Offset int
	// Expected says what should have been at Offset.
	Expected string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("policy: rule %q: at offset %d: expected %s", e.Rule, e.Offset, e.Expected)
}

// ParseRule parses a rule written `tool` or `tool(pattern)`. See the package
// documentation for the syntax. Errors are *ParseError.
func ParseRule(text string) (Rule, error) {
	fail := func(offset int, expected string) (Rule, error) {
		return Rule{}, &ParseError{Rule: text, Offset: offset, Expected: expected}
	}
	i := 0
	if strings.HasPrefix(text, "@") {
		i = 1 // a class: @ and a class name
	}
	for i < len(text) && isToolNameByte(text[i]) {
		i++
	}
	if i == 0 {
		return fail(0, "a tool name (letters, digits, '_', '-', '*')")
	}
	r := Rule{Tool: text[:i]}
	if text[0] == '@' && !IsClass(r.Tool) {
		return fail(0, "a known class ("+ClassEdits+")")
	}
	if i == len(text) {
		return r, nil
	}
	if text[i] != '(' {
		return fail(i, "a tool name character, '(' or the end of the rule")
	}
	if !strings.HasSuffix(text, ")") || len(text) == i+1 {
		return fail(len(text), "')' closing the pattern")
	}
	r.Pattern = text[i+1 : len(text)-1]
	r.HasPattern = true
	if strings.TrimSpace(r.Pattern) == "" {
		return fail(i+1, "a non-empty pattern")
	}
	return r, nil
}

// MustParseRule is [ParseRule] for rules known to be valid; it panics on
// error.
func MustParseRule(text string) Rule {
	r, err := ParseRule(text)
	if err != nil {
		panic(err)
	}
	return r
}

func isToolNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '*'
}

// String returns the rule in its written form; ParseRule(r.String())
// returns r.
func (r Rule) String() string {
	if !r.HasPattern {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// MarshalText encodes the rule in its written form, so rules travel in
// settings files and logs as strings.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a rule.
func (r *Rule) UnmarshalText(text []byte) error {
	parsed, err := ParseRule(string(text))
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}

// MatchesTool reports whether the rule's tool glob matches the tool name.
func (r Rule) MatchesTool(tool string) bool { return wildcardMatch(r.Tool, tool) }

// wildcardMatch matches s against a pattern in which '*' stands for any run
// of bytes and every other byte for itself.
func wildcardMatch(pattern, s string) bool {
	// Iterative matcher with single-star backtracking: linear in practice,
	// O(len(pattern)*len(s)) at worst.
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starI = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case starP >= 0:
			starI++
			p, i = starP+1, starI
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
