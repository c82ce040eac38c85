package instructions

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// SkillToolName is the name of the tool that loads a skill.
const SkillToolName = "skill"

// SkillArgs are the skill tool's arguments.
type SkillArgs struct {
	Name string `json:"name" desc:"the skill's name, as listed under Skills in the system prompt" min:"1"`
}

// SkillTool returns the tool that loads a skill of the project: its
// instructions and the list of the files bundled with it. It reads the
// project's current snapshot at each call, so a skill added or edited
// while the session runs is found.
func SkillTool(p *Project) *registry.Definition {
	return registry.MustDefine(registry.Spec[SkillArgs]{
		Name:        SkillToolName,
		Title:       "Load skill",
		Description: "Load a skill: its instructions for a particular kind of task, and the files bundled with it. The skills available are listed under Skills in the system prompt; load one when the task at hand matches its description, then follow it.",
		Kind:        presentation.KindRead,
		PresentCall: func(_ registry.Call, a SkillArgs) presentation.CallView {
			return presentation.CallView{Title: "Load skill " + a.Name, Kind: presentation.KindRead}
		},
	}, func(_ context.Context, _ registry.Call, a SkillArgs) (registry.Result, error) {
		snap := p.Snapshot()
		sk, ok := snap.Skill(a.Name)
		if !ok {
			names := make([]string, len(snap.Skills))
			for i, s := range snap.Skills {
				names[i] = s.Name
			}
			msg := fmt.Sprintf("there is no skill %q", a.Name)
			if len(names) > 0 {
				msg += "; the skills are: " + strings.Join(names, ", ")
			} else {
				msg += "; this project has no skills"
			}
			return registry.ErrorResult(registry.CodeToolError, msg), nil
		}
		text, err := LoadSkill(sk)
		if err != nil {
			return registry.ErrorResult(registry.CodeToolError, err.Error()), nil
		}
		return registry.TextResult(text), nil
	})
}

// LoadSkill is what the model reads when a skill is loaded (by the skill
// tool or a /<skill> command): the instructions of SKILL.md and the
// files bundled with it.
func LoadSkill(sk Skill) (string, error) {
	body, err := sk.Body()
	if err != nil {
		return "", fmt.Errorf("skill %s cannot be read: %w", sk.Name, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Skill %s (%s), loaded from %s:\n\n", sk.Name, sk.Description, sk.Path)
	sb.WriteString(strings.TrimRight(body, "\n"))
	sb.WriteByte('\n')
	files, more := sk.Bundled()
	if len(files) > 0 {
		fmt.Fprintf(&sb, "\nFiles bundled with this skill, relative to %s (read or run them when the instructions call for it):\n", sk.Dir)
		for _, f := range files {
			fmt.Fprintf(&sb, "- %s\n", f)
		}
		if more {
			fmt.Fprintf(&sb, "- … more files not listed (over %d)\n", maxBundled)
		}
	}
	return sb.String(), nil
}
