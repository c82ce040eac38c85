package instructions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/instructions"
)

// BenchmarkNested is what the bridge adds to every tool call with a path
// (finding the instruction files below the cwd that govern it), next to
// the floor of one os.Stat of the same file.
func BenchmarkNested(b *testing.B) {
	repo := b.TempDir()
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	file := filepath.Join(repo, "a", "b", "c", "x.go")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte("package c\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "a", "AGENTS.md"), []byte("a rule\n"), 0o644)
	lib := instructions.NewLibrary(instructions.Options{Logger: quiet()})
	p := lib.Open(repo, nil)
	defer p.Close()
	roots := []string{repo}
	b.Run("stat-floor", func(b *testing.B) {
		for b.Loop() {
			os.Stat(file)
		}
	})
	// The first look at a path reads the directories up to the cwd.
	b.Run("first-look", func(b *testing.B) {
		for b.Loop() {
			if len(p.Nested(file, roots, nil)) != 1 {
				b.Fatal("not found")
			}
		}
	})
	// Later calls in the session on paths already looked at cost no
	// system call.
	b.Run("repeat", func(b *testing.B) {
		looked := map[string]bool{}
		seen := func(p string) bool { was := looked[p]; looked[p] = true; return was }
		p.Nested(file, roots, seen)
		for b.Loop() {
			if len(p.Nested(file, roots, seen)) != 0 {
				b.Fatal("shown twice")
			}
		}
	})
}

// BenchmarkPrompt is the per-request cost of the system prompt's section
// with three instruction files and ten skills.
func BenchmarkPrompt(b *testing.B) {
	repo := b.TempDir()
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	cwd := filepath.Join(repo, "a", "b")
	for _, d := range []string{repo, filepath.Join(repo, "a"), cwd} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "AGENTS.md"), []byte(strings.Repeat("An instruction line of the file.\n", 100)), 0o644)
	}
	for i := range 10 {
		name := "skill-" + string(rune('a'+i))
		dir := filepath.Join(repo, ".agents", "skills", name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Does a thing.\n---\nbody\n"), 0o644)
	}
	lib := instructions.NewLibrary(instructions.Options{Logger: quiet()})
	p := lib.Open(repo, nil)
	defer p.Close()
	for b.Loop() {
		if p.Snapshot().Prompt() == "" {
			b.Fatal("empty")
		}
	}
}
