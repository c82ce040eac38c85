package policy

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

// TestResolvedRootsFollowChanges: a remembered root lands every path where
// walking it afresh does, before and after each change to the root or the
// directories on its way.
func TestResolvedRootsFollowChanges(t *testing.T) {
	subjects := []registry.Subject{
		{Kind: registry.SubjectPath, Value: "f.txt"},
		{Kind: registry.SubjectPath, Value: "sub/../g.txt"},
	}
	tests := []struct {
		name   string
		change func(t *testing.T, base string)
	}{
		{"nothing changes", func(*testing.T, string) {}},
		{"the root's symlink is repointed", func(t *testing.T, base string) {
			must(t, os.Remove(filepath.Join(base, "link")))
			must(t, os.Symlink(filepath.Join(base, "b", "ws"), filepath.Join(base, "link")))
		}},
		{"a directory on the way becomes a symlink", func(t *testing.T, base string) {
			must(t, os.Rename(filepath.Join(base, "a"), filepath.Join(base, "a.old")))
			must(t, os.Symlink(filepath.Join(base, "b"), filepath.Join(base, "a")))
		}},
		{"the root is replaced by another directory", func(t *testing.T, base string) {
			must(t, os.Rename(filepath.Join(base, "a", "ws"), filepath.Join(base, "a", "ws.old")))
			must(t, os.Mkdir(filepath.Join(base, "a", "ws"), 0o755))
		}},
		{"the root is replaced by a symlink out", func(t *testing.T, base string) {
			must(t, os.Rename(filepath.Join(base, "a", "ws"), filepath.Join(base, "a", "ws.old")))
			must(t, os.Symlink(filepath.Join(base, "b", "ws"), filepath.Join(base, "a", "ws")))
		}},
		{"the root is removed", func(t *testing.T, base string) {
			must(t, os.RemoveAll(filepath.Join(base, "a", "ws")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, _ := filepath.EvalSymlinks(t.TempDir())
			for _, d := range []string{"a/ws/sub", "b/ws/sub"} {
				must(t, os.MkdirAll(filepath.Join(base, d), 0o755))
			}
			must(t, os.Symlink(filepath.Join(base, "a", "ws"), filepath.Join(base, "link")))
			// One root written through a symlink, one without any.
			roots := []string{filepath.Join(base, "link"), filepath.Join(base, "a", "ws")}
			var rr ResolvedRoots
			for _, r := range roots {
				check(t, &rr, []string{r}, subjects, "before")
				if _, ok := rr.known[r]; !ok {
					t.Fatalf("%s is not remembered", r)
				}
			}
			tt.change(t, base)
			for _, r := range roots {
				check(t, &rr, []string{r}, subjects, "after")
				check(t, &rr, []string{r}, subjects, "once more")
			}
		})
	}
}

// check fails t unless rr lands subjects where a fresh walk does.
func check(t *testing.T, rr *ResolvedRoots, roots []string, subjects []registry.Subject, when string) {
	t.Helper()
	got, want := rr.LandIn(roots, subjects), LandIn(roots, subjects)
	if !got.Same(want) || got.Cwd() != want.Cwd() {
		t.Errorf("%s, root %s: lands at %+v (cwd %s), a fresh walk at %+v (cwd %s)", when, roots[0], got.Paths(), got.Cwd(), want.Paths(), want.Cwd())
	}
}

// TestResolvedRootsConcurrent: one ResolvedRoots serves concurrent calls
// (run with -race).
func TestResolvedRootsConcurrent(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	subjects := []registry.Subject{{Kind: registry.SubjectPath, Value: "f.txt"}}
	var rr ResolvedRoots
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if lp, _ := rr.LandIn([]string{ws}, subjects).Lookup("f.txt"); lp.Abs != filepath.Join(ws, "f.txt") || lp.Root != ws {
					t.Errorf("f.txt lands at %q in %q", lp.Abs, lp.Root)
					return
				}
			}
		})
	}
	wg.Wait()
}
