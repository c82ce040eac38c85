package model

import (
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// basePrompt is the fixed part of the system prompt.
const basePrompt = `You are dshd, a coding agent working inside the user's editor. You help with software engineering tasks: reading and changing code, running commands, explaining what you find.

How to work:
- Use the tools to look before you change anything; do not guess file contents.
- Paths may be absolute or relative to the working directory. Stay inside the workspace roots unless the user asks otherwise.
- Prefer small, precise edits. After changing code, run the relevant build or tests when a command tool is available.
- A tool result marked as an error tells you what went wrong: correct the call instead of repeating it. A denied call means the user or a permission rule refused it; do not try to get around a denial.
- For work of three or more steps, keep a plan with the todo tool if it is available.
- Be concise. Answer in the user's language. Use Markdown; refer to files by their path.`

// SystemPrompt is the system prompt of a model request: the fixed
// guidance, the session's working directory and roots, its mode, the
// tools it may call, and the optional extra instructions.
func SystemPrompt(info bridge.SessionInfo, tools []registry.ToolSchema, instructions string) string {
	var sb strings.Builder
	sb.WriteString(basePrompt)
	sb.WriteString("\n\n# Environment\n")
	fmt.Fprintf(&sb, "Working directory: %s\n", info.Cwd)
	if len(info.Roots) > 0 {
		sb.WriteString("Workspace roots:\n")
		for _, r := range info.Roots {
			fmt.Fprintf(&sb, "- %s\n", r)
		}
	}
	if mode, ok := policy.Mode(info.Mode).Info(); ok {
		fmt.Fprintf(&sb, "Session mode: %s (%s): %s\n", mode.Name, mode.ID, mode.Description)
	} else if info.Mode != "" {
		fmt.Fprintf(&sb, "Session mode: %s\n", info.Mode)
	}
	if len(tools) == 0 {
		sb.WriteString("\nNo tools are available in this session: answer from the conversation alone.\n")
	} else {
		sb.WriteString("\n# Tools\n")
		for _, t := range tools {
			fmt.Fprintf(&sb, "- %s: %s\n", t.Name, firstLine(t.Description))
		}
	}
	if s := strings.TrimSpace(instructions); s != "" {
		sb.WriteString("\n# Instructions\n")
		sb.WriteString(s)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
