package host_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/host"
)

// TestLandingBeneathRoot is issue 14's finding 2 at the level of one
// access: a landing judged inside its root is opened beneath that root, so
// a directory swapped for a symlink to the outside after the decision
// cannot redirect a write or a read, and a hard link is replaced, never
// written through.
func TestLandingBeneathRoot(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "d"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := host.Landing{Written: "d/f.txt", Abs: filepath.Join(ws, "d", "f.txt"), Root: ws}
	// The swap, after the landing was judged.
	if err := os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	for name, access := range map[string]func() error{
		"write": func() error { return l.WriteText("forged") },
		"read":  func() error { _, err := l.ReadText(t.Context(), 0, 0); return err },
		"stat":  func() error { _, err := l.Stat(); return err },
		"mkdirs": func() error {
			return (host.Landing{Written: "d/x/y", Abs: filepath.Join(ws, "d", "x", "y"), Root: ws}).MkdirParents()
		},
	} {
		if err := access(); err == nil {
			t.Errorf("%s through the swapped symlink succeeded", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f.txt")); string(b) != "outside\n" {
		t.Errorf("outside/f.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("directories were created outside")
	}

	// A hard link to a file elsewhere is replaced by the write.
	protected := filepath.Join(base, "settings.json")
	if err := os.WriteFile(protected, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "hard.json")
	if err := os.Link(protected, link); err != nil {
		t.Fatal(err)
	}
	if err := (host.Landing{Written: "hard.json", Abs: link, Root: ws}).WriteText("forged"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(protected); string(b) != "{}\n" {
		t.Errorf("the write went through the hard link: %q", b)
	}
	if b, _ := os.ReadFile(link); string(b) != "forged" {
		t.Errorf("hard.json = %q", b)
	}
	if fi, _ := os.Stat(link); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the replaced file's 0600", fi.Mode().Perm())
	}

	// A landing outside its root is refused before anything is opened.
	bad := host.Landing{Written: "../outside/f.txt", Abs: filepath.Join(outside, "f.txt"), Root: ws}
	if err := bad.WriteText("forged"); err == nil {
		t.Error("a landing outside its root was written")
	}
}
