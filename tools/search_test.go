package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeTree creates files (path → content) under a new temp dir and gives
// each a distinct modification time, in map-key order of mtimes given.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for p, c := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(abs), 0o755))
		must(t, os.WriteFile(abs, []byte(c), 0o644))
	}
	return root
}

func rels(root string, ms []GlobMatch) []string {
	var out []string
	for _, m := range ms {
		r, _ := filepath.Rel(root, m.Path)
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

func TestGlob(t *testing.T) {
	root := writeTree(t, map[string]string{
		".git/config":        "",
		".gitignore":         "*.log\nbuild/\n!keep.log\n/top.txt\n",
		"a.go":               "",
		"b.log":              "",
		"keep.log":           "",
		"top.txt":            "",
		"src/top.txt":        "",
		"src/x.go":           "",
		"src/deep/y.go":      "",
		"src/deep/z.ts":      "",
		"src/.gitignore":     "z.ts\n",
		"build/out.go":       "",
		"vendor/v.go":        "",
		"vendor/.gitignore":  "*\n",
		"docs/readme.md":     "",
		"docs/sub/guide.md":  "",
		"src/deep/note.md":   "",
		"src/deep/keep.log":  "",
		"src/deep/other.log": "",
	})
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*.go", []string{"a.go", "src/deep/y.go", "src/x.go"}},
		{"**/*.go", []string{"a.go", "src/deep/y.go", "src/x.go"}},
		{"src/**/*.go", []string{"src/deep/y.go", "src/x.go"}},
		{"src/*.go", []string{"src/x.go"}},
		{"*.log", []string{"keep.log", "src/deep/keep.log"}},
		{"*.txt", []string{"src/top.txt"}},
		{"*.ts", nil},
		{"*.{md,go}", []string{"a.go", "docs/readme.md", "docs/sub/guide.md", "src/deep/note.md", "src/deep/y.go", "src/x.go"}},
		{"docs/**", []string{"docs/readme.md", "docs/sub/guide.md"}},
		{"config", nil},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, capped, err := Glob(context.Background(), root, tt.pattern, 0)
			if err != nil {
				t.Fatal(err)
			}
			names := rels(root, got)
			slices.Sort(names)
			if !slices.Equal(names, tt.want) || capped {
				t.Errorf("Glob(%q) = %v (capped %v), want %v", tt.pattern, names, capped, tt.want)
			}
		})
	}
}

func TestGlobOrderAndCap(t *testing.T) {
	root := writeTree(t, map[string]string{"old.go": "", "mid.go": "", "new.go": ""})
	now := time.Now()
	for i, n := range []string{"old.go", "mid.go", "new.go"} {
		ts := now.Add(time.Duration(i-3) * time.Hour)
		must(t, os.Chtimes(filepath.Join(root, n), ts, ts))
	}
	got, capped, err := Glob(context.Background(), root, "*.go", 2)
	if err != nil {
		t.Fatal(err)
	}
	if names := rels(root, got); !slices.Equal(names, []string{"new.go", "mid.go"}) || !capped {
		t.Errorf("got %v capped %v, want [new.go mid.go] capped", names, capped)
	}
	abs, _, err := Glob(context.Background(), "/nonexistent", filepath.Join(root, "*.go"), 0)
	if err != nil || len(abs) != 3 {
		t.Errorf("absolute pattern: %v %v", abs, err)
	}
	if _, _, err := Glob(context.Background(), root, "[", 0); err == nil {
		t.Error("bad pattern accepted")
	}
}

func TestGitignoreAboveRoot(t *testing.T) {
	root := writeTree(t, map[string]string{
		".git/HEAD":    "",
		".gitignore":   "gen/\n",
		"pkg/a.go":     "",
		"pkg/gen/b.go": "",
	})
	got, _, err := Glob(context.Background(), filepath.Join(root, "pkg"), "*.go", 0)
	if err != nil {
		t.Fatal(err)
	}
	if names := rels(root, got); !slices.Equal(names, []string{"pkg/a.go"}) {
		t.Errorf("got %v: the repository's .gitignore above the search root was not honoured", names)
	}
}

func TestGrep(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":  "ignored.txt\n",
		"a.go":        "package a\n\nfunc Foo() {}\nfunc bar() {}\n// foo again\n",
		"b.txt":       "one\ntwo\nFOO three\nfour\nfive\nsix\nfoo seven\n",
		"ignored.txt": "foo\n",
		"bin.dat":     "foo\x00bar",
		"sub/c.go":    "x := foo()\r\n",
	})
	outside := writeTree(t, map[string]string{"secret.txt": "foo secret\n"})
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")))
	ctx := context.Background()
	format := func(r *GrepResult) []string {
		var out []string
		for _, f := range r.Files {
			rel, _ := filepath.Rel(root, f.Path)
			for _, l := range f.Lines {
				sep := "-"
				if l.IsMatch {
					sep = ":"
				}
				out = append(out, filepath.ToSlash(rel)+sep+strconv.Itoa(l.Line)+sep+l.Text)
			}
			if len(f.Lines) == 0 {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return out
	}
	tests := []struct {
		name string
		o    GrepOptions
		want []string
		skip int
	}{
		{"plain", GrepOptions{Pattern: "foo"}, []string{"a.go:5:// foo again", "b.txt:7:foo seven", "sub/c.go:1:x := foo()"}, 1},
		{"ignore case", GrepOptions{Pattern: "foo", IgnoreCase: true, Glob: "*.go"}, []string{"a.go:3:func Foo() {}", "a.go:5:// foo again", "sub/c.go:1:x := foo()"}, 0},
		{"anchored per line", GrepOptions{Pattern: "^func"}, []string{"a.go:3:func Foo() {}", "a.go:4:func bar() {}"}, 1},
		{"context", GrepOptions{Pattern: "three", Context: 1}, []string{"b.txt-2-two", "b.txt:3:FOO three", "b.txt-4-four"}, 1},
		{"context merges", GrepOptions{Pattern: "(?i)foo", Context: 2, Glob: "b.txt"}, []string{"b.txt-1-one", "b.txt-2-two", "b.txt:3:FOO three", "b.txt-4-four", "b.txt-5-five", "b.txt-6-six", "b.txt:7:foo seven"}, 0},
		{"files only", GrepOptions{Pattern: "foo", FilesOnly: true}, []string{"a.go", "b.txt", "sub/c.go"}, 1},
		{"limit", GrepOptions{Pattern: "foo", Limit: 2}, []string{"a.go:5:// foo again", "b.txt:7:foo seven"}, 1},
		{"glob with slash", GrepOptions{Pattern: "foo", Glob: "sub/*.go"}, []string{"sub/c.go:1:x := foo()"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Grep(ctx, root, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			got := format(r)
			if tt.o.Limit > 0 {
				// Which matches a capped parallel search keeps depends on
				// scheduling; how many does not.
				if len(got) != len(tt.want) || r.Matches != tt.o.Limit {
					t.Errorf("got %v (%d matches), want %d", got, r.Matches, tt.o.Limit)
				}
			} else if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if tt.o.Limit == 0 && (r.Skipped != tt.skip || r.Capped) {
				t.Errorf("skipped %d capped %v, want %d false", r.Skipped, r.Capped, tt.skip)
			}
			if tt.o.Limit > 0 && !r.Capped {
				t.Error("not marked capped")
			}
		})
	}
	if _, err := Grep(ctx, root, GrepOptions{Pattern: "("}); err == nil {
		t.Error("bad regexp accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Grep(cctx, root, GrepOptions{Pattern: "foo"}); err == nil {
		t.Error("cancelled grep returned no error")
	}
}
