package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		expr string
		lit  string
		fold bool
	}{
		{`ErrUnexpectedEOF`, "ErrUnexpectedEOF", false},
		{`func \(\w+ \*Reader\) Read`, " *Reader) Read", false},
		{`(?i)deadline exceeded`, "deadline exceeded", true},
		// k and s fold to K KELVIN SIGN and ſ LONG S: the literal is cut there.
		{`(?i)mask`, "ma", true},
		{`(?i)kelvin`, "elvin", true},
		{`(?i)café latte`, " latte", true},
		{`café`, "café", false},
		{`a+b`, "a", false}, // "a" then "b": both required, equally long, the first kept
		{`(abc)+x`, "abc", false},
		{`x{2,}yz`, "yz", false},
		{`foo|bar`, "", false},
		{`[a-z]+`, "", false},
		{`(foo)?bar`, "bar", false},
		{"\uFFFD", "", false}, // matches any invalid byte: never a literal
		{`a*`, "", false},
	}
	for _, tt := range tests {
		re, err := syntax.Parse("(?m)"+tt.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		lit, fold := requiredLiteral(re.Simplify())
		if string(lit) != tt.lit || (len(lit) > 0 && fold != tt.fold) {
			t.Errorf("%q: literal %q fold %v, want %q fold %v", tt.expr, lit, fold, tt.lit, tt.fold)
		}
	}
}

func TestCanMatchNewline(t *testing.T) {
	tests := map[string]bool{
		`foo`:         false,
		`^foo$`:       false, // (?m) line anchors
		`a.b`:         false,
		`(?s)a.b`:     true,
		`a\sb`:        true,
		`a[^x]b`:      true,
		`a\nb`:        true,
		`(?-m)^foo`:   true, // \A: depends on where the text starts
		`foo\z`:       true,
		`\bword\b`:    false,
		`[[:alpha:]]`: false,
	}
	for expr, want := range tests {
		re, err := syntax.Parse("(?m)"+expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := canMatchNewline(re.Simplify()); got != want {
			t.Errorf("%q: %v, want %v", expr, got, want)
		}
	}
}

func TestLiteralFinder(t *testing.T) {
	tests := []struct {
		lit, data string
		fold      bool
		from      int
		want      int
	}{
		{"xyz", "abc xyz", false, 0, 4},
		{"xyz", "abc xyz", false, 5, -1},
		{"xyz", "xy", false, 0, -1},
		{"deadline exceeded", "context DEADLINE Exceeded!", true, 0, 8},
		{"deadline exceeded", "deadline exceede", true, 0, -1},
		{"ab", "AAAAb", true, 0, 3},
		{"ab", "abab", false, 1, 2},
		{"q", "", false, 0, -1},
	}
	for _, tt := range tests {
		f := newLiteralFinder([]byte(tt.lit), tt.fold)
		if got := f.index([]byte(tt.data), tt.from); got != tt.want {
			t.Errorf("%q in %q from %d: %d, want %d", tt.lit, tt.data, tt.from, got, tt.want)
		}
	}
}

// referenceLines is what grep did before the prefilter: one regexp pass
// over the whole file, each match's first line once.
func referenceLines(re *regexp.Regexp, data []byte) []int {
	var lines []int
	for _, loc := range re.FindAllIndex(data, -1) {
		if loc[0] == loc[1] && loc[0] == len(data) && len(data) > 0 && data[len(data)-1] == '\n' {
			continue
		}
		l := bytes.Count(data[:loc[0]], []byte{'\n'})
		if len(lines) == 0 || lines[len(lines)-1] != l {
			lines = append(lines, l)
		}
	}
	return lines
}

func checkLineMatcher(t *testing.T, expr string, data []byte) {
	t.Helper()
	m, err := newLineMatcher("(?m)" + expr)
	if err != nil {
		return
	}
	var got []int
	for _, l := range m.matchLines(data) {
		got = append(got, l.no)
		// The span is the line, without its line ending.
		start := bytes.LastIndexByte(data[:l.start], '\n') + 1
		if start != l.start || (l.end < len(data) && data[l.end] != '\n' && data[l.end] != '\r') {
			t.Fatalf("%q: span %d..%d is not a line of %q", expr, l.start, l.end, data)
		}
	}
	if want := referenceLines(m.re, data); !slices.Equal(got, want) {
		t.Fatalf("%q on %q: lines %v, want %v", expr, data, got, want)
	}
}

func TestLineMatcherAgreesWithWholeFileSearch(t *testing.T) {
	data := []byte("package io\n\nfunc (r *Reader) Read(p []byte) {}\r\nvar ErrUnexpectedEOF = x\n" +
		"// DeadLine Exceeded\nctx deadline exceeded\n\u212aelvin mask MA\u017fK\nlast line, no newline")
	for _, expr := range []string{
		`func \(\w+ \*Reader\) Read`, `(?i)deadline exceeded`, `ErrUnexpectedEOF`, `(?i)mask`,
		`(?i)kelvin`, `^var`, `line$`, `newline$`, `\bEOF\b`, `x\s+//`, `(?s)Read.*EOF`, `^$`,
		`p \[\]byte`, `\)\s*\{`, `[A-Z]+`, `(?-m)^package`, `newline\z`, `e`,
	} {
		checkLineMatcher(t, expr, data)
	}
}

func FuzzLineMatcher(f *testing.F) {
	f.Add(`ab`, []byte("xx ab\nab\n"))
	f.Add(`(?i)Deadline`, []byte("no\nDEADLINE\n"))
	f.Add(`a\sb`, []byte("a\nb\n"))
	f.Add(`(?i)ks`, []byte("\u212a\u017f\n"))
	f.Add(`^x$`, []byte("x\r\nx\n"))
	f.Fuzz(func(t *testing.T, expr string, data []byte) {
		if len(expr) > 64 {
			return
		}
		checkLineMatcher(t, expr, data)
	})
}

// TestGrepMatchesRipgrep compares Grep's matches with ripgrep's on the Go
// source tree for the benchmark patterns: the prefilter must not change
// what is found.
func TestGrepMatchesRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("DSHD_REQUIRE_RG") != "" {
			t.Fatal("rg not installed and DSHD_REQUIRE_RG is set (make bench-deps installs it)")
		}
		t.Skip("rg not installed: make bench-deps installs it (CI does)")
	}
	if testing.Short() {
		t.Skip("searches the Go source tree; not in -short")
	}
	root := grepCorpus(t)
	for _, p := range grepPatterns {
		res, err := Grep(context.Background(), root, GrepOptions{Pattern: p.expr, MaxLineBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Files {
			for _, l := range f.Lines {
				got = append(got, fmt.Sprintf("%s:%d", f.Path, l.Line))
			}
		}
		out, err := exec.Command(rg, rgArgs(p.expr, root)...).Output()
		if err != nil {
			t.Fatalf("rg %s: %v", p.expr, err)
		}
		var want []string
		for line := range strings.Lines(string(out)) {
			// path:line:text; paths hold no ':' in the Go tree.
			parts := strings.SplitN(line, ":", 3)
			want = append(want, parts[0]+":"+parts[1])
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d matches, rg %d; first differences: %v", p.name, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, "+"+s)
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, "-"+s)
		}
	}
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

// TestGlobLimitKeepsNewest: with a limit Glob keeps only that many
// matches while walking, and they are the newest, exactly as sorting all
// of them would give.
func TestGlobLimitKeepsNewest(t *testing.T) {
	root := t.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		p := filepath.Join(root, fmt.Sprintf("f%03d.go", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// Mtimes in a scrambled order, with ties broken by path.
		mt := base.Add(time.Duration((i*37)%50) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	full, capped, err := Glob(context.Background(), root, "*.go", 0)
	if err != nil || capped || len(full) != 200 {
		t.Fatalf("no limit: %d matches, capped %v, %v", len(full), capped, err)
	}
	for _, limit := range []int{1, 7, 199, 200, 201} {
		got, capped, err := Glob(context.Background(), root, "*.go", limit)
		if err != nil {
			t.Fatal(err)
		}
		want := full[:min(limit, len(full))]
		if !slices.Equal(got, want) || capped != (limit < 200) {
			t.Errorf("limit %d: %d matches (capped %v), want the first %d of the full sort", limit, len(got), capped, len(want))
		}
	}
}
