// Package instructions owns what a repository tells the agent: its
// instruction files (AGENTS.md, or CLAUDE.md where a directory has no
// AGENTS.md), its skills (.agents/skills/*/SKILL.md, .claude/skills/*/SKILL.md)
// and its custom slash commands (.dshd/commands/*.md), plus the user-level
// ones in $XDG_CONFIG_HOME/dshd. It finds them, parses their YAML front
// matter (a small, strict subset: [ParseFrontMatter]), cuts the
// instruction files to a byte budget with the cut said in the text, and
// watches the files so a change applies to the next model request.
//
// A [Library] serves the sessions of a daemon; each session opens the
// [Project] of its working directory and reads [Snapshot]s from it:
//
//	lib := instructions.NewLibrary(instructions.Options{UserDir: "/home/me/.config/dshd"})
//	p := lib.Open("/src/repo/cmd", func(*instructions.Snapshot) { /* re-advertise commands */ })
//	defer p.Close()
//	system := base + p.Snapshot().Prompt() // instruction files, then skills
//	nested := p.Nested("/src/repo/cmd/x/main.go", roots) // cmd/x/AGENTS.md, once per session
//
// The package knows nothing of ACP: the bridge advertises commands and
// attaches nested files to tool results, the model loop puts
// [Snapshot.Prompt] in the system prompt, and [SkillTool] is an ordinary
// registry tool.
package instructions
