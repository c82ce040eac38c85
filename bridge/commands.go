package bridge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/policy"
)

// Slash commands the bridge answers itself, without the loop. Editors send
// them as prompt text ("/mode plan").
const (
	CommandPermissions = "permissions"
	CommandRevoke      = "revoke"
	CommandMode        = "mode"
)

// Commander is implemented by a [Loop] that answers slash commands of its
// own (the built-in loop's /compact). The bridge advertises them after its
// own commands; a prompt that starts with one reaches the loop's Turn like
// any prompt the bridge does not answer itself.
type Commander interface {
	Commands() []acp.AvailableCommand
}

// availableCommands are the bridge's commands and the loop's.
func (s *session) availableCommands() []acp.AvailableCommand {
	cmds := bridgeCommands()
	if c, ok := s.agent.opts.Loop.(Commander); ok {
		for _, lc := range c.Commands() {
			if !slices.ContainsFunc(cmds, func(b acp.AvailableCommand) bool { return b.Name == lc.Name }) {
				cmds = append(cmds, lc)
			}
		}
	}
	return cmds
}

func bridgeCommands() []acp.AvailableCommand {
	var names []string
	for _, m := range policy.Modes() {
		names = append(names, string(m.ID))
	}
	return []acp.AvailableCommand{
		{Name: CommandPermissions, Description: "List the permission rules in force: the remembered answers (session, project, user) and the configured rules."},
		{Name: CommandRevoke, Description: "Forget a remembered Always allow / Always reject answer.", Input: &acp.AvailableCommandInput{Hint: "rule number from /permissions, or all"}},
		{Name: CommandMode, Description: "Switch the session mode.", Input: &acp.AvailableCommandInput{Hint: strings.Join(names, " | ")}},
		{Name: CommandUndo, Description: "Revert the files that write and edit changed in the last turn (or the last N turns).", Input: &acp.AvailableCommandInput{Hint: "number of turns (default 1)"}},
	}
}

// slashCommand runs a bridge command if the prompt is one. Unknown
// commands go to the loop, which may know them.
func (s *session) slashCommand(t *Turn) (bool, acp.StopReason) {
	if len(t.prompt) == 0 {
		return false, ""
	}
	tc, ok := t.prompt[0].Value.(*acp.TextContent)
	if !ok || !strings.HasPrefix(tc.Text, "/") {
		return false, ""
	}
	fields := strings.Fields(tc.Text[1:])
	if len(fields) == 0 {
		return false, ""
	}
	name, args := fields[0], fields[1:]
	var reply string
	if expanded, handled, r := s.expandCommand(t, name, commandArgs(tc.Text, name)); expanded {
		return false, ""
	} else if handled {
		t.Text(r)
		return true, acp.StopEndTurn
	}
	switch name {
	case CommandPermissions:
		reply = s.describeRules()
	case CommandRevoke:
		reply = s.revokeCommand(args)
	case CommandMode:
		reply = s.modeCommand(args)
	case CommandUndo:
		reply = s.undoCommand(t, args)
	default:
		return false, ""
	}
	t.Text(reply)
	return true, acp.StopEndTurn
}

// commandArgs is the text after the command's name, quotes and spacing
// kept.
func commandArgs(text, name string) string {
	rest := strings.TrimLeft(text[1:], " \t")
	return strings.TrimSpace(strings.TrimPrefix(rest, name))
}

func (s *session) describeRules() string {
	var b strings.Builder
	gs, problems := s.grants()
	if len(gs) == 0 {
		b.WriteString("No answers are remembered for this session.\n")
	} else {
		b.WriteString("Remembered answers:\n")
		for i, g := range gs {
			fmt.Fprintf(&b, "%d. %s `%s` %s%s\n", i+1, g.decision, g.rule, g.scope.Phrase(), s.whereKept(g.scope))
		}
		b.WriteString("\nRevoke one with `/revoke <number>` or all with `/revoke all`.\n")
	}
	for _, p := range problems {
		fmt.Fprintf(&b, "⚠ Ignored, because it cannot be used: %v\n", p)
	}
	fmt.Fprintf(&b, "New answers are remembered %s%s (settings key `permissions.remember`: session, project or user).\n",
		s.agent.rememberScope(s.cwd).Phrase(), s.whereKept(s.agent.rememberScope(s.cwd)))
	rs := s.agent.Rules()
	if len(rs.Allow)+len(rs.Ask)+len(rs.Deny) > 0 {
		b.WriteString("\nConfigured (settings files):\n")
		for _, l := range []struct {
			d     policy.Decision
			rules []policy.Rule
		}{{policy.Deny, rs.Deny}, {policy.Ask, rs.Ask}, {policy.Allow, rs.Allow}} {
			for _, r := range l.rules {
				fmt.Fprintf(&b, "- %s `%s`\n", l.d, r)
			}
		}
	}
	fmt.Fprintf(&b, "\nMode: %s.", s.currentMode())
	return b.String()
}

// whereKept names the file of a scope's grants, for listings.
func (s *session) whereKept(scope policy.Scope) string {
	if g := s.agent.opts.Grants; g != nil && scope != policy.ScopeSession {
		return " (" + g.File(s.cwd, scope) + ")"
	}
	return ""
}

func (s *session) revokeCommand(args []string) string {
	gs, _ := s.grants()
	if len(args) != 1 {
		return "Usage: `/revoke <number>` (see `/permissions`) or `/revoke all`."
	}
	if args[0] == "all" {
		var failed []string
		for _, g := range gs {
			if err := s.revoke(g); err != nil {
				failed = append(failed, fmt.Sprintf("%s `%s`: %v", g.decision, g.rule, err))
			}
		}
		if len(failed) > 0 {
			return fmt.Sprintf("Revoked %d remembered rule(s); these could not be revoked:\n%s", len(gs)-len(failed), strings.Join(failed, "\n"))
		}
		return fmt.Sprintf("Revoked %d remembered rule(s).", len(gs))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > len(gs) {
		return fmt.Sprintf("There is no remembered rule %q; `/permissions` lists them.", args[0])
	}
	g := gs[n-1]
	if err := s.revoke(g); err != nil {
		return fmt.Sprintf("Could not revoke %s `%s`: %v", g.decision, g.rule, err)
	}
	return fmt.Sprintf("Revoked: %s `%s` %s.", g.decision, g.rule, g.scope.Phrase())
}

func (s *session) modeCommand(args []string) string {
	if len(args) != 1 || !policy.Mode(args[0]).Valid() {
		var names []string
		for _, m := range policy.Modes() {
			names = append(names, "`"+string(m.ID)+"`")
		}
		return "Usage: `/mode <mode>` with one of " + strings.Join(names, ", ") + "."
	}
	if err := s.setMode(args[0]); err != nil {
		return err.Error()
	}
	m, _ := policy.Mode(args[0]).Info()
	return fmt.Sprintf("Mode: %s. %s", m.Name, m.Description)
}
