package policy

import (
	"errors"
	"github.com/dsh-tools/dshd/registry"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfine(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	root := filepath.Join(base, "root")
	extra := filepath.Join(base, "extra")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, extra, outside, filepath.Join(root, "sub")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "file"), []byte("f"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(root, "out")))                          // dir link escaping
	must(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(root, "dangle"))) // dangling, escaping
	must(t, os.Symlink("sub", filepath.Join(root, "in")))                             // relative, inside
	must(t, os.Symlink("../outside/secret", filepath.Join(root, "rel")))              // relative, escaping
	must(t, os.Symlink("loop", filepath.Join(root, "loop")))
	must(t, os.Symlink(root, filepath.Join(extra, "back"))) // additional root linking into the first
	roots := []string{root, extra}

	tests := []struct {
		name    string
		path    string
		wantAbs string
		inside  bool
		wantErr error
	}{
		{"relative", "sub/a.go", filepath.Join(root, "sub/a.go"), true, nil},
		{"dot", ".", root, true, nil},
		{"doubled separators", "sub//./a.go", filepath.Join(root, "sub/a.go"), true, nil},
		{"dotdot escape", "../outside/secret", filepath.Join(outside, "secret"), false, nil},
		{"dotdot hidden in middle", "sub/../../outside/x", filepath.Join(outside, "x"), false, nil},
		{"dotdot stays inside", "sub/../a", filepath.Join(root, "a"), true, nil},
		{"dotdot above the file system root", "/../../etc", "/etc", false, nil},
		{"absolute inside", filepath.Join(root, "x"), filepath.Join(root, "x"), true, nil},
		{"absolute outside", "/etc/passwd", "/etc/passwd", false, nil},
		{"additional root", filepath.Join(extra, "f"), filepath.Join(extra, "f"), true, nil},
		{"additional root linking back", filepath.Join(extra, "back", "f"), filepath.Join(root, "f"), true, nil},
		{"prefix sibling is not inside", root + "x/f", root + "x/f", false, nil},
		{"symlink dir escape", "out/secret", filepath.Join(outside, "secret"), false, nil},
		{"dangling symlink escape", "dangle", filepath.Join(outside, "new"), false, nil},
		{"relative symlink inside", "in/f", filepath.Join(root, "sub/f"), true, nil},
		{"relative symlink escape", "rel", filepath.Join(outside, "secret"), false, nil},
		{"dotdot after symlink follows target", "out/../root/x", filepath.Join(root, "x"), true, nil},
		{"missing parent is lexical", "new/dir/../f", filepath.Join(root, "new/f"), true, nil},
		{"file used as a directory", "file/x", filepath.Join(root, "file/x"), true, nil},
		{"tilde is literal", "~/x", filepath.Join(root, "~/x"), true, nil},
		{"fullwidth solidus is a name", "..\uFF0Foutside", filepath.Join(root, "..\uFF0Foutside"), true, nil},
		{"division slash is a name", "..\u2215outside", filepath.Join(root, "..\u2215outside"), true, nil},
		{"one-dot-leader is a name", "\u2024\u2024/x", filepath.Join(root, "\u2024\u2024/x"), true, nil},
		{"symlink loop", "loop/x", "", false, ErrSymlinkLoop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			abs, inside, err := Confine(roots, tt.path)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if abs != tt.wantAbs || inside != tt.inside {
				t.Errorf("Confine(%q) = %q, %v; want %q, %v", tt.path, abs, inside, tt.wantAbs, tt.inside)
			}
		})
	}
	if _, _, err := Confine(nil, "x"); err == nil {
		t.Error("Confine without roots: no error")
	}
	if _, err := Resolve("relative/base", "x"); err == nil {
		t.Error("Resolve against a relative base: no error")
	}
	if _, err := Resolve(root, ""); err == nil {
		t.Error("Resolve of an empty path: no error")
	}
}

func TestProtected(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	state := filepath.Join(base, "state")
	repo := filepath.Join(base, "repo")
	settings := filepath.Join(repo, ".dshd", "settings.json")
	must(t, os.MkdirAll(filepath.Join(repo, ".git", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Dir(settings), 0o755))
	must(t, os.MkdirAll(state, 0o755))
	must(t, os.Symlink(filepath.Join(repo, ".git"), filepath.Join(repo, "g")))
	must(t, os.Symlink(settings, filepath.Join(repo, "s")))
	must(t, os.Symlink(filepath.Join(state, "new.jsonl"), filepath.Join(repo, "dangle")))
	must(t, os.Symlink("loop", filepath.Join(repo, "loop")))
	policyFiles := []string{settings, "local.json"} // relative: against the session cwd

	tests := []struct {
		path string
		want bool
	}{
		{filepath.Join(repo, "main.go"), false},
		{"main.go", false},
		{filepath.Join(repo, ".git", "config"), true},
		{".git/config", true},
		{filepath.Join(repo, ".git"), true},
		{filepath.Join(repo, ".GIT", "hooks", "pre-commit"), true},
		{filepath.Join(repo, "sub", ".git", "HEAD"), true},
		{filepath.Join(repo, "g", "hooks", "x"), true}, // via symlink
		{filepath.Join(repo, "s"), true},               // symlink to the settings file
		{filepath.Join(repo, "dangle"), true},          // dangling symlink into the state dir
		{filepath.Join(repo, "x", "..", ".dshd", "settings.json"), true},
		{filepath.Join(repo, ".dshd", "other.json"), false},
		{filepath.Join(repo, ".gitignore"), false},
		{"local.json", true},
		{filepath.Join(base, "local.json"), false},
		{filepath.Join(state, "sessions", "a.jsonl"), true},
		{state, true},
		{"loop/x", true}, // unresolvable: not safe to write
		// Issue 14, finding 3: the directories holding a protected entry
		// cannot be created, removed, renamed or replaced.
		{filepath.Join(repo, ".dshd"), true},
		{".dshd", true},
		{".dshd/", true},
		{"./.dshd/.", true},
		{".DSHD", true},
		{".Dshd/Settings.JSON", true},
		{"sub/../.dshd", true},
		{repo, false}, // the workspace itself is no protected directory
		{base, true},  // holds the state directory, which lies outside the workspace
		{filepath.Dir(base), false},
		{".dshd-old", false},
		{"a\x00b", true},                         // a NUL byte does not resolve
		{strings.Repeat("x", 300), true},         // neither does a name too long
		{strings.Repeat("d/", 2100) + "f", true}, // 4 KiB: longer than any path the kernel takes
	}
	for _, tt := range tests {
		if got := Protected(repo, tt.path, state, policyFiles); got != tt.want {
			t.Errorf("Protected(%q) = %v, want %v", tt.path, got, tt.want)
		}
		// The same judgement from the landing the bridge computed once.
		if abs, err := Resolve(repo, tt.path); err == nil {
			if got := (Landing{}).Protected(repo, abs, state, policyFiles); got != tt.want {
				t.Errorf("Landing{}.Protected(%q) = %v, want %v", abs, got, tt.want)
			}
		}
		// And through the lookups of that landing.
		l := Land(repo, []registry.Subject{{Kind: registry.SubjectPath, Value: tt.path, Writes: true}})
		if lp, ok := l.Lookup(tt.path); ok && lp.Err == nil {
			if got := l.Protected(repo, lp.Abs, state, policyFiles); got != tt.want {
				t.Errorf("Landing.Protected(%q) = %v, want %v", lp.Abs, got, tt.want)
			}
		}
	}
	if !(Landing{}).Protected(repo, "relative", state, policyFiles) {
		t.Error("a relative path is no landing, and not safe to write")
	}
}

// The lookups shared by one check are made afresh by the next: an entry
// turned into a symlink between two checks is judged where it lands now.
func TestProtectedSeesSymlinkMadeBetweenChecks(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "repo")
	evil := filepath.Join(repo, "evil")
	must(t, os.MkdirAll(evil, 0o755))
	grants := filepath.Join(repo, ".dshd", "settings.local.json")
	target := filepath.Join(evil, "settings.local.json")
	if (Landing{}).Protected(repo, target, "", []string{grants}) {
		t.Fatal("evil/settings.local.json is protected before .dshd exists")
	}
	must(t, os.Symlink("evil", filepath.Join(repo, ".dshd")))
	if !(Landing{}).Protected(repo, target, "", []string{grants}) {
		t.Error("with .dshd -> evil, writing evil/settings.local.json writes the grants: it must be protected")
	}
	if !Protected(repo, "evil/settings.local.json", "", []string{grants}) {
		t.Error("Protected: with .dshd -> evil, evil/settings.local.json must be protected")
	}
}

// One check looks at each directory once, however many entries share it.
func TestProtectedLooksOnce(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	repo := filepath.Join(base, "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".dshd"), 0o755))
	entries := []string{".dshd/settings.json", ".dshd/settings.local.json", filepath.Join(base, "home", "settings.json")}
	var m lookups
	if protectedLanded(&m, repo, filepath.Join(repo, "out.txt"), filepath.Join(base, "state"), entries) {
		t.Fatal("out.txt is protected")
	}
	// Every directory from / to base, then repo, .dshd, its two files,
	// state and home (missing: what lies below it is not looked at), each
	// once.
	want := len(splitPath(filepath.ToSlash(base))) + 6
	if len(m.seen) != want {
		t.Errorf("%d paths looked at, want %d: %v", len(m.seen), want, m.seen)
	}
}

func FuzzResolve(f *testing.F) {
	f.Add("a/../../b")
	f.Add("~/x/./y//z")
	f.Add("/abs/../..")
	f.Add("..\uFF0F..")
	f.Fuzz(func(t *testing.T, p string) {
		if p == "" {
			return
		}
		abs, err := Resolve("/nonexistent-base-dir", p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
			t.Fatalf("Resolve(%q) = %q: not clean and absolute", p, abs)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLandIn is issue 14's finding 1: a path lands where the kernel would
// open it (symlinks first, then ".."), and that landing names its root.
func TestLandIn(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	extra := filepath.Join(base, "extra")
	deep := filepath.Join(ws, "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8")
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.MkdirAll(extra, 0o755))
	must(t, os.Symlink("d1/d2/d3/d4/d5/d6/d7/d8", filepath.Join(ws, "a")))
	must(t, os.Symlink("loop", filepath.Join(ws, "loop")))
	must(t, os.Symlink(extra, filepath.Join(ws, "to-extra")))
	cwd, _ := os.Getwd()
	cwd, _ = filepath.EvalSymlinks(cwd)
	tests := []struct {
		path, abs, root string
		fails           bool
	}{
		{"a/../.dshd/settings.json", filepath.Join(ws, "d1/d2/d3/d4/d5/d6/d7/.dshd/settings.json"), ws, false},
		{"a/../../../../../../../../../outside/f", filepath.Join(base, "outside/f"), "", false},
		{"a/", deep, ws, false},
		{"a/.", deep, ws, false},
		{"to-extra/x", filepath.Join(extra, "x"), extra, false},
		{ws + "/a/..", filepath.Join(ws, "d1/d2/d3/d4/d5/d6/d7"), ws, false},
		{"/proc/self/cwd/../x", filepath.Join(filepath.Dir(cwd), "x"), "", false},
		{"loop/x", "", "", true},
		{"f\x00/../../x", "", "", true},
		{strings.Repeat("n", 300), "", "", true},
	}
	for _, tt := range tests {
		subjects := []registry.Subject{{Kind: registry.SubjectPath, Value: tt.path}}
		l := LandIn([]string{ws, extra}, subjects)
		lp, ok := l.Lookup(tt.path)
		if !ok {
			t.Fatalf("%q: not landed", tt.path)
		}
		if (lp.Err != nil) != tt.fails || lp.Abs != tt.abs || lp.Root != tt.root {
			t.Errorf("%q lands at %q in root %q (err %v), want %q in %q (fails %v)", tt.path, lp.Abs, lp.Root, lp.Err, tt.abs, tt.root, tt.fails)
		}
		if !l.Same(LandIn([]string{ws, extra}, subjects)) {
			t.Errorf("%q: a second landing differs", tt.path)
		}
	}
	// A symlink swapped in changes the landing.
	subjects := []registry.Subject{{Kind: registry.SubjectPath, Value: "d/f.txt"}}
	must(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
	before := LandIn([]string{ws}, subjects)
	must(t, os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d.old")))
	must(t, os.Symlink(filepath.Join(base, "outside"), filepath.Join(ws, "d")))
	if after := LandIn([]string{ws}, subjects); before.Same(after) {
		t.Errorf("the swapped landing %v is the same as %v", after.Paths(), before.Paths())
	}
}
