package policy

import (
	"strings"

	"github.com/dsh-tools/dshd/registry"
)

// subjectView is one subject of the call being evaluated, with what rules
// derive from it computed once (lazily) rather than once per rule.
type subjectView struct {
	registry.Subject
	cwd string

	resolved    string   // path: absolute (when cwd is set), cleaned
	segments    []string // path: resolved, split
	pathDone    bool
	normalized  string // command: blanks collapsed
	normDone    bool
	compound    bool
	compDone    bool
	cmdSegments []string // command: Segments
	segDone     bool
	resolvedCmd []string // command: ResolvedCommands
	resDone     bool
}

func (v *subjectView) resolvedCommands() []string {
	if !v.resDone {
		v.resolvedCmd = ResolvedCommands(v.Value)
		v.resDone = true
	}
	return v.resolvedCmd
}

func (v *subjectView) path() (string, []string) {
	if !v.pathDone {
		v.resolved = resolvePath(v.Value, v.cwd)
		v.segments = splitPath(v.resolved)
		v.pathDone = true
	}
	return v.resolved, v.segments
}

func (v *subjectView) normalizedCommand() string {
	if !v.normDone {
		v.normalized = normalizeCommand(v.Value)
		v.normDone = true
	}
	return v.normalized
}

func (v *subjectView) isCompound() bool {
	if !v.compDone {
		v.compound = Compound(v.Value)
		v.compDone = true
	}
	return v.compound
}

func (v *subjectView) commandSegments() []string {
	if !v.segDone {
		v.cmdSegments = Segments(v.Value)
		v.segDone = true
	}
	return v.cmdSegments
}

// normalizeCommand trims a command and collapses runs of blanks to one
// space, without allocating when the command is already in that form.
func normalizeCommand(cmd string) string {
	normal := len(cmd) == 0 || cmd[0] != ' ' && cmd[0] != '\t' && cmd[len(cmd)-1] != ' ' && cmd[len(cmd)-1] != '\t'
	for i := 0; normal && i < len(cmd); i++ {
		switch cmd[i] {
		case '\t', '\n', '\r', '\v', '\f':
			normal = false
		case ' ':
			normal = i+1 < len(cmd) && cmd[i+1] != ' '
		}
	}
	if normal && isASCII(cmd) {
		return cmd
	}
	return strings.Join(strings.Fields(cmd), " ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
