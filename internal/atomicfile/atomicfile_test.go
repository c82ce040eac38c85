package atomicfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dsh-tools/dshd/internal/atomicfile"
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
		if err := atomicfile.Write(p, []byte(tc.data), tc.mode); err != nil {
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
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
