package bridge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/registry"
)

// The repository's instructions, skills and custom commands (package
// instructions), as the bridge serves them: the commands and skills are
// advertised as slash commands and expanded into the prompt before the
// loop sees it, the files below the cwd are attached to the first tool
// result under their directory, and the skill tool is a session tool.

// sessionProject is a session's share of [Options.Instructions].
type sessionProject struct {
	p         *instructions.Project
	skillTool *registry.Definition

	// Guarded by session.mu.
	looked     map[string]bool // paths looked at for nested instruction files
	reported   map[string]bool // problems told to the user already
	advertised []acp.AvailableCommand
}

// openProject opens the session's project; it runs before the session's
// tools are attached.
func (s *session) openProject() {
	lib := s.agent.opts.Instructions
	if lib == nil {
		return
	}
	sp := &sessionProject{looked: map[string]bool{}, reported: map[string]bool{}}
	s.project = sp
	// A change may be reported before Open returned: it waits until the
	// session's project is complete.
	ready := make(chan struct{})
	sp.p = lib.Open(s.cwd, func(*instructions.Snapshot) {
		<-ready
		s.projectChanged()
	})
	sp.skillTool = instructions.SkillTool(sp.p)
	close(ready)
}

// closeProject releases the session's project.
func (s *session) closeProject() {
	if s.project != nil {
		s.project.p.Close()
	}
}

// projectChanged runs when a project file changed: the skill tool comes or
// goes with the skills, and the slash commands are advertised again when
// they changed.
func (s *session) projectChanged() {
	if err := s.refreshSessionTools(); err != nil {
		s.agent.log.Warn("session tools not refreshed; keeping the previous ones", "session", s.id, "err", err)
	}
	s.mu.Lock()
	ready := !s.closed && (s.announced == nil || isClosed(s.announced))
	s.mu.Unlock()
	if ready {
		s.advertise(false)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// projectSnapshot returns the project's current files, nil without
// Options.Instructions.
func (s *session) projectSnapshot() *instructions.Snapshot {
	if s.project == nil {
		return nil
	}
	return s.project.p.Snapshot()
}

// skillTools is the session tool that loads skills, when the project has
// skills and the settings do not switch the tool off.
func (s *session) skillTools() []*registry.Definition {
	snap := s.projectSnapshot()
	if snap == nil || len(snap.Skills) == 0 || !s.agent.registry.Admits(instructions.SkillToolName) {
		return nil
	}
	return []*registry.Definition{s.project.skillTool}
}

// commands returns the session's slash commands: the bridge's own, then
// the custom commands, then the skills, with the problems of the project
// (a custom command or skill that clashes with a command listed before it
// is refused).
func (s *session) commands() ([]acp.AvailableCommand, []instructions.Problem) {
	cmds := s.availableCommands()
	snap := s.projectSnapshot()
	if snap == nil {
		return cmds, nil
	}
	problems := slices.Clone(snap.Problems)
	builtin := map[string]bool{}
	for _, c := range cmds {
		builtin[c.Name] = true
	}
	taken := map[string]string{}
	for _, c := range snap.Commands {
		if builtin[c.Name] {
			problems = append(problems, instructions.Problem{Path: c.Path, Message: fmt.Sprintf("command /%s refused: /%s is a built-in command", c.Name, c.Name)})
			continue
		}
		taken[c.Name] = c.Path
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = "Custom command from " + c.Path
		}
		if c.ArgumentHint != "" {
			ac.Input = &acp.AvailableCommandInput{Hint: c.ArgumentHint}
		}
		cmds = append(cmds, ac)
	}
	for _, sk := range snap.Skills {
		if builtin[sk.Name] {
			problems = append(problems, instructions.Problem{Path: sk.Path, Message: fmt.Sprintf("skill %s is not offered as /%s: that is a built-in command (the skill tool still loads it)", sk.Name, sk.Name)})
			continue
		}
		if path, ok := taken[sk.Name]; ok {
			problems = append(problems, instructions.Problem{Path: sk.Path, Message: fmt.Sprintf("skill %s is not offered as /%s: the custom command %s has that name (the skill tool still loads it)", sk.Name, sk.Name, path)})
			continue
		}
		cmds = append(cmds, acp.AvailableCommand{
			Name:        sk.Name,
			Description: "Skill: " + oneLine(sk.Description),
			Input:       &acp.AvailableCommandInput{Hint: "what to do with the skill (optional)"},
		})
	}
	return cmds, problems
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// advertise sends the session's slash commands (always when force, else
// only when they changed since the last time) and tells the user, once
// each, the problems of the project's files.
func (s *session) advertise(force bool) {
	cmds, problems := s.commands()
	var tell []string
	s.mu.Lock()
	changed := force
	if sp := s.project; sp != nil {
		changed = changed || !slices.EqualFunc(sp.advertised, cmds, sameCommand)
		sp.advertised = cmds
		for _, p := range problems {
			if k := p.String(); !sp.reported[k] {
				sp.reported[k] = true
				tell = append(tell, k)
			}
		}
	}
	s.mu.Unlock()
	if changed {
		s.sendUpdate(&acp.AvailableCommandsUpdate{AvailableCommands: cmds})
	}
	if len(tell) > 0 {
		s.agent.log.Warn("project files not used", "session", s.id, "problems", tell)
		s.sendUpdate(&acp.AgentMessageChunk{Content: acp.Text("⚠ " + strings.Join(tell, "\n⚠ ") + "\n")})
	}
}

func sameCommand(a, b acp.AvailableCommand) bool {
	if a.Name != b.Name || a.Description != b.Description || (a.Input == nil) != (b.Input == nil) {
		return false
	}
	return a.Input == nil || a.Input.Hint == b.Input.Hint
}

// expandCommand turns a prompt that starts with a custom command or a
// skill's command into the prompt the loop sees: the command's template
// filled with the arguments, or the skill's instructions and the user's
// request, followed by the prompt's other blocks. handled says the command
// was answered here instead (a skill that cannot be read).
func (s *session) expandCommand(t *Turn, name, args string) (expanded, handled bool, reply string) {
	snap := s.projectSnapshot()
	if snap == nil {
		return false, false, ""
	}
	named := func(c acp.AvailableCommand) bool { return c.Name == name }
	if slices.ContainsFunc(s.availableCommands(), named) {
		return false, false, "" // the bridge's own
	}
	if cmds, _ := s.commands(); !slices.ContainsFunc(cmds, named) {
		return false, false, "" // unknown, or refused
	}
	var text string
	if c, ok := snap.Command(name); ok {
		text = c.Expand(args)
	} else if sk, ok := snap.Skill(name); ok {
		loaded, err := instructions.LoadSkill(sk)
		if err != nil {
			return false, true, "⚠ " + err.Error()
		}
		request := "The user gave no further request: apply the skill to the task at hand."
		if args != "" {
			request = "The user's request: " + args
		}
		text = fmt.Sprintf("The user started this turn with the skill %s; its instructions are loaded below. Follow them.\n\n%s\n%s", sk.Name, loaded, request)
	} else {
		return false, false, ""
	}
	t.typed = t.prompt
	t.prompt = append([]acp.ContentBlock{acp.Text(text)}, t.prompt[1:]...)
	return true, false, ""
}

// attachNested adds to a call's result the instruction files that govern
// the paths it touched and that the model has not seen in this session:
// those of directories below the cwd (the ones at and above it are in the
// system prompt).
func (s *session) attachNested(exec *pipeline.Execution, res *registry.Result) {
	if s.project == nil || exec == nil {
		return
	}
	var paths []string
	for _, subj := range exec.Subjects() {
		if subj.Kind != registry.SubjectPath {
			continue
		}
		paths = append(paths, absPath(s.cwd, subj.Value))
	}
	if len(paths) == 0 {
		return
	}
	roots := s.info().Roots
	seen := func(p string) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		was := s.project.looked[p]
		s.project.looked[p] = true
		return was
	}
	var show []instructions.File
	for _, p := range paths {
		show = append(show, s.project.p.Nested(p, roots, seen)...)
	}
	if len(show) == 0 {
		return
	}
	text := instructions.AttachText(show, s.projectSnapshot().Budget)
	if res.AdditionalContext != "" {
		text = res.AdditionalContext + "\n\n" + text
	}
	res.AdditionalContext = text
}
