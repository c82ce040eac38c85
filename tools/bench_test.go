package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree generates 20,000 small source-like files (20 × 20 directories
// of 50 files), a .gitignore, and a few matches of the benchmark patterns.
func benchTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	words := []string{"alpha", "beta", "gamma", "delta", "return", "value", "index", "buffer", "config", "server"}
	must(b, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.tmp\n"), 0o644))
	n := 0
	for i := range 20 {
		for j := range 20 {
			dir := filepath.Join(root, fmt.Sprintf("pkg%02d", i), fmt.Sprintf("sub%02d", j))
			must(b, os.MkdirAll(dir, 0o755))
			for k := range 50 {
				var sb strings.Builder
				for l := range 30 {
					fmt.Fprintf(&sb, "%s %s %s %d\n", words[(n+l)%10], words[(n*7+l)%10], words[(n*3+l*5)%10], l)
				}
				if n%997 == 0 {
					sb.WriteString("func ServeHandler(w, r) {}\n")
				}
				ext := ".go"
				if k%5 == 0 {
					ext = ".txt"
				}
				must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d%s", k, ext)), []byte(sb.String()), 0o644))
				n++
			}
		}
	}
	return root
}

const benchPattern = `func [A-Z][a-z]+Handler`

// BenchmarkGrep compares Grep with GNU grep -rnE on the same tree, in the
// same run: read the ratio of the two ns/op.
func BenchmarkGrep(b *testing.B) {
	root := benchTree(b)
	b.Run("dshd", func(b *testing.B) {
		for b.Loop() {
			r, err := Grep(context.Background(), root, GrepOptions{Pattern: benchPattern})
			if err != nil || r.Matches != 21 {
				b.Fatalf("matches %v %v", r, err)
			}
		}
	})
	b.Run("grep-rnE", func(b *testing.B) {
		if _, err := exec.LookPath("grep"); err != nil {
			b.Skip("grep not installed")
		}
		for b.Loop() {
			cmd := exec.Command("grep", "-rnE", benchPattern, root)
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGlob compares Glob with find -name on the same tree, in the
// same run.
func BenchmarkGlob(b *testing.B) {
	root := benchTree(b)
	b.Run("dshd", func(b *testing.B) {
		for b.Loop() {
			m, _, err := Glob(context.Background(), root, "*.txt", 0)
			if err != nil || len(m) != 4000 {
				b.Fatalf("matches %d %v", len(m), err)
			}
		}
	})
	b.Run("find-name", func(b *testing.B) {
		if _, err := exec.LookPath("find"); err != nil {
			b.Skip("find not installed")
		}
		for b.Loop() {
			cmd := exec.Command("find", root, "-name", "*.txt")
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// grepCorpus is the tree the search targets of issue 19 are set on: the Go
// distribution's own source, which every machine that builds dshd has.
func grepCorpus(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

// grepPatterns are the four shapes of issue 19: a plain literal, a regexp
// with a literal part, a case-insensitive phrase, and one with no literal
// at all (reported, no target).
var grepPatterns = []struct{ name, expr string }{
	{"literal", `ErrUnexpectedEOF`},
	{"regexp", `func \(\w+ \*Reader\) Read`},
	{"ignorecase", `(?i)deadline exceeded`},
	{"noliteral", `\w+Reader\w*\(`},
}

// rgArgs make ripgrep search what Grep searches: hidden files too, and
// .gitignore files honoured outside a git repository as well.
func rgArgs(expr, root string) []string {
	return []string{"-n", "--hidden", "--no-require-git", "--no-config", "-e", expr, root}
}

// BenchmarkGrepGoroot compares Grep with ripgrep (`rg -n`, both cores) on
// $(go env GOROOT)/src, pattern by pattern, in the same run: the ratio of
// dshd to rg is the figure of issue 19 (target ≤ 1.5x).
func BenchmarkGrepGoroot(b *testing.B) {
	root := grepCorpus(b)
	rg, rgErr := exec.LookPath("rg")
	for _, p := range grepPatterns {
		b.Run(p.name, func(b *testing.B) {
			b.Run("rg", func(b *testing.B) {
				if rgErr != nil {
					b.Skip("rg not installed (make bench-deps)")
				}
				for b.Loop() {
					cmd := exec.Command(rg, rgArgs(p.expr, root)...)
					cmd.Stdout = io.Discard
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("dshd", func(b *testing.B) {
				for b.Loop() {
					if _, err := Grep(context.Background(), root, GrepOptions{Pattern: p.expr}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
