package policy

import (
	"fmt"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Mode is a session mode: how calls that no rule decides are treated.
type Mode string

const (
	// ModeDefault allows read-only calls and asks before edits and
	// commands.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows file edits inside the session's roots;
	// commands still ask.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: mutating calls are denied with
	// [PlanModeDenial], which tells the model to present a plan instead.
	ModePlan Mode = "plan"
	// ModeBypassPermissions never asks: what would ask is allowed. Deny
	// rules and guards still apply.
	ModeBypassPermissions Mode = "bypassPermissions"
)

// PlanModeDenial is the denial reason of a mutating call in plan mode; the
// model reads it as the call's result.
const PlanModeDenial = "The session is in plan mode: tools that change files or run commands are " +
	"not available. Investigate with read-only tools, then present your plan to the user " +
	"and wait for them to switch modes before making changes."

// ModeInfo describes a mode for the editor (ACP's SessionMode and the
// options of the `mode` config option).
type ModeInfo struct {
	ID          Mode
	Name        string
	Description string
}

var modes = []ModeInfo{
	{ModeDefault, "Default", "Reads are allowed; edits and commands ask for permission."},
	{ModeAcceptEdits, "Accept edits", "File edits inside the workspace are allowed; commands ask for permission."},
	{ModePlan, "Plan", "Read-only: the agent investigates and presents a plan without changing anything."},
	{ModeBypassPermissions, "Bypass permissions", "Nothing asks for permission; deny rules and workspace confinement still apply."},
}

// Modes returns the modes in the order an editor should list them. The
// caller may modify the returned slice.
func Modes() []ModeInfo { return append([]ModeInfo(nil), modes...) }

// Info returns the mode's description; ok is false for an unknown mode.
func (m Mode) Info() (info ModeInfo, ok bool) {
	for _, info := range modes {
		if info.ID == m {
			return info, true
		}
	}
	return ModeInfo{}, false
}

// Valid reports whether m is one of the modes.
func (m Mode) Valid() bool {
	_, ok := m.Info()
	return ok
}

// ParseMode returns the mode with the given id.
func ParseMode(id string) (Mode, error) {
	m := Mode(id)
	if !m.Valid() {
		return "", fmt.Errorf("policy: unknown mode %q (want default, acceptEdits, plan or bypassPermissions)", id)
	}
	return m, nil
}

// isFileEdit reports whether a kind edits files (as opposed to running
// commands or doing something else that mutates).
func isFileEdit(kind presentation.ToolCallKind) bool {
	switch kind {
	case presentation.KindEdit, presentation.KindDelete, presentation.KindMove:
		return true
	}
	return false
}

// ModeDecision is what the mode says about a call of the given kind and
// subjects, before rules are considered:
//
//   - default: read-only kinds Allow, mutating kinds Ask.
//   - acceptEdits: read-only kinds Allow; edit, delete and move calls Allow
//     when they have path subjects only, at least one, and insideRoots
//     accepts every one; everything else that mutates Asks.
//   - plan: read-only kinds Allow, mutating kinds Deny (reason
//     [PlanModeDenial]).
//   - bypassPermissions: Allow.
//
// An unknown mode behaves as default. insideRoots may be nil outside
// acceptEdits; a nil insideRoots accepts no path.
func ModeDecision(mode Mode, kind presentation.ToolCallKind, subjects []registry.Subject, insideRoots func(path string) bool) Decision {
	if mode == ModeBypassPermissions {
		return Allow
	}
	if !kind.Mutates() {
		return Allow
	}
	switch mode {
	case ModePlan:
		return Deny
	case ModeAcceptEdits:
		if isFileEdit(kind) && len(subjects) > 0 && insideRoots != nil {
			for _, s := range subjects {
				if s.Kind != registry.SubjectPath || !insideRoots(s.Value) {
					return Ask
				}
			}
			return Allow
		}
	}
	return Ask
}

// Decide combines the rules' verdict with the mode's decision into the
// decision for the call:
//
//  1. a deny rule denies;
//  2. a mode denial (plan mode) denies, whatever the rules allow;
//  3. an ask rule asks, except in bypassPermissions, which allows;
//  4. an allow rule allows;
//  5. otherwise the mode decides.
func Decide(mode Mode, rules Verdict, modeDecision Decision) Decision {
	switch {
	case rules.Decision == Deny:
		return Deny
	case modeDecision == Deny:
		return Deny
	case rules.Decision == Ask:
		if mode == ModeBypassPermissions {
			return Allow
		}
		return Ask
	case rules.Decision == Allow:
		return Allow
	}
	return modeDecision
}
