package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		data string
		mode os.FileMode
	}{{"new", 0o644}, {"secret", 0o600}} {
		if err := Write(p, []byte(tc.data), tc.mode); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || string(got) != tc.data || (runtime.GOOS != "windows" && fi.Mode().Perm() != tc.mode) {
			t.Errorf("file %q mode %v, want %q %v (%v)", got, fi.Mode().Perm(), tc.data, tc.mode, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}

// TestFailedWriteKeepsOldContent: a write that fails after the new data is
// on disk (in the temporary file) leaves the old content and no temporary
// file, through both entry points.
func TestFailedWriteKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("disk on fire")
	beforeRename = func() error { return failed }
	defer func() { beforeRename = nil }()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, write := range map[string]func() error{
		"Write":   func() error { return Write(p, []byte("new"), 0o644) },
		"WriteIn": func() error { return WriteIn(r, "f.txt", []byte("new"), 0o644) },
	} {
		if err := write(); !errors.Is(err, failed) {
			t.Errorf("%s: err = %v, want %v", name, err, failed)
		}
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("%s: the file holds %q after a failed write, want the old content", name, got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s: temporary files left: %v", name, entries)
		}
	}
}
