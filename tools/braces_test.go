package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// globSeeds are patterns from the glob tests, escapes, unbalanced and
// nested braces, and ones whose expansion explodes.
var globSeeds = []string{
	"*.go", "**/*.go", "src/**/*.go", "*.{md,go}", "docs/**", "[", "config",
	"{a,b}{c,d}", "{a,{b,c}}x", "{,x}", "{}", "{a}", "a{b", "a}b", "}{", `\{a,b}`, `{a\,b,c}`, `{a,b\}`, `x\`,
	"src/{cmd,internal/{a,b}}/*.{go,s}",
	strings.Repeat("{a,b}", 30),
	strings.Repeat("{", 2000) + strings.Repeat("}", 2000),
	"{" + strings.Repeat(",", 5000) + "}{" + strings.Repeat(",", 5000) + "}",
}

// FuzzExpandBraces checks the {a,b} expansion of glob patterns, which
// models write: it never panics and stays bounded (a pattern that would
// expand past maxBraceExpansions patterns or maxBraceBytes fails with
// errBraceExpansion instead of exhausting memory); a pattern without
// braces is itself; every expanded pattern is plain (expands to itself);
// and splitTopLevel loses nothing.
func FuzzExpandBraces(f *testing.F) {
	for _, s := range globSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		if parts := splitTopLevel(pattern); strings.Join(parts, ",") != pattern {
			t.Fatalf("splitTopLevel(%q) = %q: not lossless", pattern, parts)
		}
		out, err := expandBraces(pattern)
		if err != nil {
			if !errors.Is(err, errBraceExpansion) || out != nil {
				t.Fatalf("expandBraces(%.80q) = %d patterns, %v", pattern, len(out), err)
			}
			return
		}
		if len(out) == 0 || len(out) > maxBraceExpansions {
			t.Fatalf("expandBraces(%.80q): %d patterns", pattern, len(out))
		}
		size := 0
		for _, p := range out {
			size += len(p)
		}
		if size > maxBraceBytes {
			t.Fatalf("expandBraces(%.80q): %d bytes", pattern, size)
		}
		if !strings.Contains(pattern, "{") && (len(out) != 1 || out[0] != pattern) {
			t.Fatalf("expandBraces(%q) = %q, want the pattern itself", pattern, out)
		}
		for _, p := range out {
			again, err := expandBraces(p)
			if err != nil || len(again) != 1 || again[0] != p {
				t.Fatalf("expanded pattern %q expands again to %q, %v", p, again, err)
			}
		}
	})
}

// FuzzFileMatcher checks that a glob filter never panics on any pattern and
// path, and that a brace pattern matches exactly what one of its expanded
// patterns matches.
func FuzzFileMatcher(f *testing.F) {
	for _, s := range globSeeds {
		f.Add(s, "src/deep/y.go")
	}
	f.Add("*.go", "a.go")
	f.Add("src/*.go", "src/x.go")
	f.Add("**/z.{ts,go}", "z.ts")
	f.Add("[!a]*", "")
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		m, err := newFileMatcher(pattern)
		if err != nil {
			if !errors.Is(err, errBraceExpansion) {
				t.Fatalf("newFileMatcher(%.80q): %v", pattern, err)
			}
			return
		}
		for _, anchored := range []bool{false, true} {
			m.anchored = anchored
			got := m.match(rel)
			want := false
			for _, p := range m.pats {
				one, err := newFileMatcher(p)
				if err != nil {
					t.Fatalf("expanded pattern %q: %v", p, err)
				}
				one.anchored = anchored
				want = want || one.match(rel)
			}
			if got != want {
				t.Fatalf("pattern %q (anchored %v) matches %q: %v; its expansions: %v", pattern, anchored, rel, got, want)
			}
		}
	})
}

// TestBraceExpansionIsBounded: a short pattern whose alternatives multiply
// to a billion patterns fails at once in Glob and Grep instead of
// exhausting memory, and the error says what to change.
func TestBraceExpansionIsBounded(t *testing.T) {
	root := writeTree(t, map[string]string{"a.go": "x"})
	bomb := strings.Repeat("{a,b}", 30)
	if _, _, err := Glob(context.Background(), root, bomb, 0); !errors.Is(err, errBraceExpansion) || !strings.Contains(err.Error(), "fewer alternatives") {
		t.Errorf("Glob: %v", err)
	}
	if _, err := Grep(context.Background(), root, GrepOptions{Pattern: "x", Glob: bomb}); !errors.Is(err, errBraceExpansion) {
		t.Errorf("Grep: %v", err)
	}
	// 1024 patterns are still fine.
	if got, _, err := Glob(context.Background(), root, strings.Repeat("{a,b}", 10)+"*.go", 0); err != nil || len(got) != 0 {
		t.Errorf("Glob of 1024 alternatives: %v %v", got, err)
	}
}
