package instructions_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-tools/dshd/instructions"
)

// A custom command from .dshd/commands/review.md (the README's example),
// expanded with the arguments typed after /review.
func ExampleCommand_Expand() {
	repo, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(repo)
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, ".dshd", "commands"), 0o755)
	os.WriteFile(filepath.Join(repo, ".dshd", "commands", "review.md"), []byte(`---
description: Review a file for error handling
argument-hint: <file> [focus]
---
Review $1 with a focus on $2: list each problem with its line, most severe first.
`), 0o644)

	lib := instructions.NewLibrary(instructions.Options{})
	p := lib.Open(repo, nil)
	defer p.Close()
	cmd, _ := p.Snapshot().Command("review")
	fmt.Println(cmd.Description, "|", cmd.ArgumentHint)
	fmt.Print(cmd.Expand(`main.go "error paths"`))
	// Output:
	// Review a file for error handling | <file> [focus]
	// Review main.go with a focus on error paths: list each problem with its line, most severe first.
}

// The system prompt's section of a repository with an AGENTS.md and a
// skill.
func ExampleSnapshot_Prompt() {
	repo, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(repo)
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Run go test before saying a change is done.\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, ".agents", "skills", "release-notes"), 0o755)
	os.WriteFile(filepath.Join(repo, ".agents", "skills", "release-notes", "SKILL.md"), []byte(`---
name: release-notes
description: Write the release notes of a version from the git log.
---
Group the changes by package.
`), 0o644)

	lib := instructions.NewLibrary(instructions.Options{})
	p := lib.Open(repo, nil)
	defer p.Close()
	s := p.Snapshot()
	fmt.Println(len(s.Files), s.Files[0].Text == "Run go test before saying a change is done.\n")
	fmt.Println(s.Skills[0].Name+":", s.Skills[0].Description)
	// Output:
	// 1 true
	// release-notes: Write the release notes of a version from the git log.
}
