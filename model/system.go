package model

import (
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/policy"
)

// basePrompt is the fixed part of the system prompt.
const basePrompt = `You are dshd, a coding agent working inside the user's editor. You help with software engineering tasks: reading and changing code, running commands, explaining what you find.

How to work:
- Use the tools to look before you change anything; do not guess file contents.
- Paths may be absolute or relative to the working directory. Stay inside the workspace roots unless the user asks otherwise.
- Prefer small, precise edits. After changing code, run the relevant build or tests when a command tool is available.
- A tool result marked as an error tells you what went wrong: correct the call instead of repeating it. A denied call means the user or a permission rule refused it; do not try to get around a denial.
- For work of three or more steps, keep a plan with the todo tool if it is available.
- Notes in <system-reminder> tags come from dshd, not from the user: the session mode in force, or that older tool results were cleared to save space (run the call again if you need one).
- Be concise. Answer in the user's language. Use Markdown; refer to files by their path.`

// noToolsNote replaces the tool guidance when a request carries no tools.
const noToolsNote = "No tools are available in this session: answer from the conversation alone."

// System is the content of a system prompt. Its sections always come in
// the same order, and none of them holds anything that changes from one
// request of a session to the next (no times, counters or the session
// mode, which goes into the conversation instead, see [ModeReminder]), so
// the system prompt and the tool definitions before it form a byte-stable
// prefix that providers' prompt caches serve again:
//
//  1. the fixed guidance;
//  2. # Environment: the working directory and the workspace roots;
//  3. # Project instructions: what the repository tells the agent
//     (AGENTS.md and the like, see [Project]);
//  4. # Skills: the skills the agent may load on demand;
//  5. # Instructions: the deployment's instructions and the loop's own
//     (a subagent's role, a structured turn's final tool).
//
// Empty sections are left out. The tools themselves are not listed: the
// request carries their names and descriptions already.
type System struct {
	Info    bridge.SessionInfo
	Project Project
	// NoTools says the request carries no tools.
	NoTools bool
	// Instructions are the deployment's and the loop's instructions.
	Instructions string
}

// Project is what the repository of a session tells the agent; an
// [Options.Project] function supplies it once per turn.
type Project struct {
	// Instructions are the project's instructions to the agent (the
	// contents of AGENTS.md files, for example), shown verbatim.
	Instructions string
	// Skills are listed by name and description; the model loads one when
	// it needs it.
	Skills []Skill
	// SkillTool, optional, names the tool that loads a skill.
	SkillTool string
}

// projectOf is the project context of an instructions snapshot (see
// [bridge.Turn.Project]).
func projectOf(s *instructions.Snapshot) Project {
	p := Project{Instructions: s.InstructionsText(), SkillTool: instructions.SkillToolName}
	for _, k := range s.Skills {
		p.Skills = append(p.Skills, Skill{Name: k.Name, Description: k.Description})
	}
	return p
}

// Skill is one entry of the system prompt's skill list.
type Skill struct {
	Name        string
	Description string
	// Location, optional, says where the skill's full text is (a path the
	// model may read).
	Location string
}

// String renders the system prompt.
func (s System) String() string {
	var sb strings.Builder
	sb.WriteString(basePrompt)
	if s.NoTools {
		sb.WriteString("\n\n" + noToolsNote)
	}
	sb.WriteString("\n\n# Environment\n")
	fmt.Fprintf(&sb, "Working directory: %s\n", s.Info.Cwd)
	if len(s.Info.Roots) > 0 {
		sb.WriteString("Workspace roots:\n")
		for _, r := range s.Info.Roots {
			fmt.Fprintf(&sb, "- %s\n", r)
		}
	}
	if p := strings.TrimSpace(s.Project.Instructions); p != "" {
		sb.WriteString("\n# Project instructions\n")
		sb.WriteString(p)
		sb.WriteByte('\n')
	}
	if len(s.Project.Skills) > 0 {
		sb.WriteString("\n# Skills\nSkills are instructions for particular tasks. When a task matches a skill's description, ")
		if s.Project.SkillTool != "" {
			fmt.Fprintf(&sb, "load the skill with the `%s` tool", s.Project.SkillTool)
		} else {
			sb.WriteString("load the skill")
		}
		sb.WriteString(" before you start, then follow it.\n")
		for _, k := range s.Project.Skills {
			fmt.Fprintf(&sb, "- %s: %s", k.Name, firstLine(k.Description))
			if k.Location != "" {
				fmt.Fprintf(&sb, " (%s)", k.Location)
			}
			sb.WriteByte('\n')
		}
	}
	if i := strings.TrimSpace(s.Instructions); i != "" {
		sb.WriteString("\n# Instructions\n")
		sb.WriteString(i)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// ModeReminder is the note that tells the model the session mode, put into
// the conversation (the prompt, or the tool results after a mode change)
// rather than the system prompt, so a mode change does not invalidate the
// cached prefix.
func ModeReminder(mode policy.Mode) string {
	if m, ok := mode.Info(); ok {
		return fmt.Sprintf("<system-reminder>Session mode: %s (%s): %s</system-reminder>", m.Name, m.ID, m.Description)
	}
	return fmt.Sprintf("<system-reminder>Session mode: %s</system-reminder>", mode)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// withModeReminder adds a mode reminder to a user message of a prompt
// turn when the session's mode is not the one the conversation last told
// the model (a sub-turn's conversation is told nothing: the subagent's
// calls are checked against the mode all the same).
func (r *run) withModeReminder(m llm.Message) llm.Message {
	if r.sub != nil {
		return m
	}
	mode := r.t.SessionInfo().Mode
	if mode == "" || mode == r.toldMode {
		return m
	}
	r.toldMode = mode
	m.Parts = append(append([]llm.Part(nil), m.Parts...), &llm.Text{Text: ModeReminder(mode)})
	return m
}

// lastToldMode is the mode of the latest mode reminder in msgs ("" when
// there is none).
func lastToldMode(msgs []llm.Message) policy.Mode {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		for j := len(msgs[i].Parts) - 1; j >= 0; j-- {
			if t, ok := msgs[i].Parts[j].(*llm.Text); ok {
				if mode, ok := parseModeReminder(t.Text); ok {
					return mode
				}
			}
		}
	}
	return ""
}

// parseModeReminder reads the mode id back from a [ModeReminder] text.
func parseModeReminder(text string) (policy.Mode, bool) {
	rest, ok := strings.CutPrefix(text, "<system-reminder>Session mode: ")
	if !ok || !strings.HasSuffix(rest, "</system-reminder>") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "</system-reminder>")
	if open := strings.Index(rest, " ("); open >= 0 {
		if end := strings.Index(rest[open:], "): "); end >= 0 {
			id := policy.Mode(rest[open+2 : open+end])
			if ModeReminder(id) == text {
				return id, true
			}
		}
	}
	if ModeReminder(policy.Mode(rest)) == text {
		return policy.Mode(rest), true
	}
	return "", false
}
