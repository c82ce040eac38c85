package policy

import "fmt"

// Scope is how far an allow_always or reject_always grant reaches: the
// session it was given in, the project (every later session in the same
// working directory, whichever daemon runs it), or the user (every
// project).
type Scope string

// The scopes of remembered grants.
const (
	ScopeSession Scope = "session"
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
)

// ParseScope parses "session", "project" or "user".
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeSession, ScopeProject, ScopeUser:
		return sc, nil
	}
	return "", fmt.Errorf("policy: unknown scope %q (want session, project or user)", s)
}

// Phrase says where a grant of this scope applies, for option names and
// listings: "in this session", "in this project", "in all your projects".
func (s Scope) Phrase() string {
	switch s {
	case ScopeProject:
		return "in this project"
	case ScopeUser:
		return "in all your projects"
	}
	return "in this session"
}
