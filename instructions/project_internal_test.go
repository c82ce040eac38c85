package instructions

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Only the names the project looks for make a change of the watched
// directories worth reading the files again.
func TestRelevantEvents(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "sub")
	user := filepath.Join(t.TempDir(), "dshd")
	p := &project{lib: &Library{userDir: user}, cwd: cwd, root: root}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{filepath.Join(cwd, "out.txt"), false},
		{filepath.Join(cwd, ".out.txt.dshd-0a1b2c"), false},
		{filepath.Join(root, "main.go"), false},
		{filepath.Join(cwd, "AGENTS.md"), true},
		{filepath.Join(root, "CLAUDE.md"), true},
		{filepath.Join(cwd, "agents.md"), true}, // case-insensitive file systems
		{filepath.Join(cwd, ".agents"), true},
		{filepath.Join(root, ".claude"), true},
		{filepath.Join(cwd, ".dshd"), true},
		{filepath.Join(cwd, ".dshd", "settings.local.json"), false},
		{filepath.Join(cwd, ".dshd", "commands"), true},
		{filepath.Join(root, ".agents", "skills"), true},
		{filepath.Join(root, ".agents", "notes.md"), false},
		{filepath.Join(cwd, ".agents", "skills", "x"), true},
		{filepath.Join(cwd, ".agents", "skills", "x", "SKILL.md"), true},
		{filepath.Join(cwd, ".dshd", "commands", "hello.md"), true},
		{filepath.Join(user, "AGENTS.md"), true},
		{filepath.Join(user, "settings.json"), false},
		{filepath.Join(user, "skills"), true},
		{user, true},
		{filepath.Join(filepath.Dir(user), "other"), false},
	} {
		if got := p.relevantLocked(tc.name); got != tc.want {
			t.Errorf("relevant(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Files a session writes in its working directory do not make the project
// read its instruction files again; AGENTS.md still does.
func TestUnrelatedWritesDoNotReload(t *testing.T) {
	cwd := t.TempDir()
	lib := NewLibrary(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	changed := make(chan *Snapshot, 16)
	h := lib.Open(cwd, func(s *Snapshot) { changed <- s })
	defer h.Close()
	if !h.p.watching.Load() {
		t.Fatal("no file watcher")
	}
	before := h.p.loads.Load()
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(cwd, "out"+strconv.Itoa(i)+".txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, AgentsFile), []byte("rule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for !strings.Contains(h.p.snap.Load().Prompt(), "rule") {
		select {
		case <-changed:
		case <-timeout:
			t.Fatal("the AGENTS.md write was not seen")
		}
	}
	// The AGENTS.md write may raise two events (create, write) read
	// apart: at most two readings.
	if n := h.p.loads.Load() - before; n > 2 {
		t.Errorf("the files were read %d times for 50 unrelated writes and one AGENTS.md", n)
	}
}
