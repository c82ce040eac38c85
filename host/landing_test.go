package host_test

import (
	"errors"
	"io/fs"
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
		"head":  func() error { _, _, err := l.Head(10); return err },
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

// Head gives a regular file's information and its first bytes (no more
// than it holds), and a FIFO's information without opening it (which
// would block).
func TestLandingHead(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	land := func(name string) host.Landing {
		return host.Landing{Written: name, Abs: filepath.Join(ws, name), Root: ws}
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{3, "one"}, {100, "one\ntwo\n"}} {
		fi, head, err := land("f.txt").Head(tc.n)
		if err != nil || fi.Size() != 8 || string(head) != tc.want {
			t.Errorf("Head(%d) = %v, %q, %v; want size 8, %q", tc.n, fi, head, err, tc.want)
		}
	}
	if _, _, err := land("missing").Head(10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Head of a missing file: %v", err)
	}
	if err := mkfifo(filepath.Join(ws, "fifo")); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	fi, head, err := land("fifo").Head(10)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 || head != nil {
		t.Errorf("Head of a FIFO = %v, %q, %v", fi, head, err)
	}
}

// TestHeadThenReadTextReadsOnce: the read tool checks a file with Head and
// then reads it; for a small file Head read whole, ReadText of the same
// landing serves what Head read (one reading, not two opens), once. A
// landing written as a literal, and a file larger than Head's buffer,
// are read from the disk.
func TestHeadThenReadTextReadsOnce(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	path := filepath.Join(ws, "f.txt")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readAfterHead := func(l host.Landing, n int, line, limit int) string {
		t.Helper()
		write("one\ntwo\nthree\n")
		if _, _, err := l.Head(n); err != nil {
			t.Fatal(err)
		}
		write("changed on disk\n") // what a second opening would see
		got, err := l.ReadText(t.Context(), line, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		name        string
		landing     func() host.Landing
		n           int
		line, limit int
		want        string
	}{
		{"whole", func() host.Landing { return host.NewLanding("f.txt", path, ws) }, 100, 0, 0, "one\ntwo\nthree\n"},
		{"window", func() host.Landing { return host.NewLanding("f.txt", path, ws) }, 100, 2, 1, "two\n"},
		{"larger than the head", func() host.Landing { return host.NewLanding("f.txt", path, ws) }, 4, 0, 0, "changed on disk\n"},
		{"literal", func() host.Landing { return host.Landing{Written: "f.txt", Abs: path, Root: ws} }, 100, 0, 0, "changed on disk\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.landing()
			if got := readAfterHead(l, tc.n, tc.line, tc.limit); got != tc.want {
				t.Errorf("ReadText after Head = %q, want %q", got, tc.want)
			}
			// What Head read is taken once: the next read is the disk's.
			if got, _ := l.ReadText(t.Context(), 0, 0); got != "changed on disk\n" {
				t.Errorf("second ReadText = %q, want the disk's content", got)
			}
		})
	}
}
