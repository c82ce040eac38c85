package policy

import (
	"fmt"

	"github.com/dsh-tools/dshd/presentation"
)

// Mode is a session mode: how calls that no rule decides are treated.
type Mode string

const (
	// ModeDefault allows reads inside the session's roots and asks before
	// edits, commands and anything outside the roots.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows file edits inside the session's roots;
	// commands and paths outside the roots still ask.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: mutating calls are denied, whatever the rules
	// allow, with feedback that tells the model to present a plan instead.
	ModePlan Mode = "plan"
	// ModeBypassPermissions never asks, not even for paths outside the
	// roots or calls an ask rule matches. Deny rules, protected paths, the
	// OS sandbox and the approval of unsandboxed commands still apply.
	ModeBypassPermissions Mode = "bypassPermissions"
)

// ModeInfo is one row of the mode table: the mode's names for the editor
// (ACP's SessionMode and the options of the `mode` config option) and for
// the model (the mode reminder), and what the mode decides. The bridge's
// listeners read the decisions from here, so the description and the
// behaviour are written side by side.
type ModeInfo struct {
	ID          Mode
	Name        string
	Description string

	// Edits decides a file-changing call (kind edit, delete or move)
	// inside the roots that no rule decides.
	Edits Decision
	// Changes decides any other mutating call (commands, tools of kind
	// other) that no rule decides. Reads are always allowed.
	Changes Decision
	// OutsideRoots decides a call with a path outside the session's roots
	// that no allow rule covers: Ask, or Allow when the mode confines
	// nothing.
	OutsideRoots Decision
	// AskRules is what a matching ask rule decides: Ask, or Allow.
	AskRules Decision
}

var modes = []ModeInfo{
	{ModeDefault, "Default",
		"Reads inside the workspace run freely; edits, commands and anything outside the workspace ask first.",
		Ask, Ask, Ask, Ask},
	{ModeAcceptEdits, "Accept edits",
		"File edits inside the workspace run without asking; commands and anything outside the workspace still ask.",
		Allow, Ask, Ask, Ask},
	{ModePlan, "Plan",
		"Read-only: the agent explores and presents a plan, changing nothing; reads outside the workspace ask first.",
		Deny, Deny, Ask, Ask},
	{ModeBypassPermissions, "Bypass permissions",
		"Nothing asks, not even paths outside the workspace; deny rules, protected paths, the OS sandbox and approval of unsandboxed commands still apply.",
		Allow, Allow, Allow, Allow},
}

// Modes returns the mode table in the order an editor should list the
// modes. The caller may modify the returned slice.
func Modes() []ModeInfo { return append([]ModeInfo(nil), modes...) }

// Info returns the mode's row of the table; ok is false for an unknown
// mode.
func (m Mode) Info() (info ModeInfo, ok bool) {
	for _, info := range modes {
		if info.ID == m {
			return info, true
		}
	}
	return ModeInfo{}, false
}

// row is the mode's row, the default mode's for an unknown mode.
func (m Mode) row() ModeInfo {
	if info, ok := m.Info(); ok {
		return info
	}
	return modes[0]
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

// ChangesFiles reports whether a kind edits files (edit, delete, move), as
// opposed to running commands or doing something else that mutates.
func ChangesFiles(kind presentation.ToolCallKind) bool {
	switch kind {
	case presentation.KindEdit, presentation.KindDelete, presentation.KindMove:
		return true
	}
	return false
}

// Decide is what the mode decides for a call of kind, inside the roots,
// that no rule decides: reads Allow, file changes [ModeInfo.Edits], any
// other mutating call [ModeInfo.Changes]. An unknown mode behaves as
// default.
func (m Mode) Decide(kind presentation.ToolCallKind) Decision {
	switch r := m.row(); {
	case !kind.Mutates():
		return Allow
	case ChangesFiles(kind):
		return r.Edits
	default:
		return r.Changes
	}
}

// OutsideRoots is what the mode decides for a call with a path outside
// the roots that no allow rule covers ([ModeInfo.OutsideRoots]).
func (m Mode) OutsideRoots() Decision { return m.row().OutsideRoots }

// AskRule is what the mode makes of a matching ask rule
// ([ModeInfo.AskRules]).
func (m Mode) AskRule() Decision { return m.row().AskRules }

// ModeCall is what the mode table needs to know of a call.
type ModeCall struct {
	Kind presentation.ToolCallKind
	// OutsideRoots: a path subject lands outside every root of the session.
	OutsideRoots bool
	// ReadOnlyHint: the tool claims to change nothing (an MCP server's
	// hint), which lets it run in plan mode when an allow rule, the
	// user's word, covers it.
	ReadOnlyHint bool
}

// Decide is the decision for a call, from the rules' verdict and the
// mode, in the order the bridge's listeners apply it:
//
//  1. a mode denial (plan mode) denies a mutating call, whatever the
//     rules allow, unless the tool has a read-only hint and an allow rule
//     covers it;
//  2. a deny rule denies;
//  3. a path outside the roots decides as [Mode.OutsideRoots] unless an
//     allow rule covers the call;
//  4. an allow rule allows, an ask rule decides as [Mode.AskRule];
//  5. otherwise [Mode.Decide] decides.
//
// Approval of unsandboxed commands and protected paths lie outside the
// modes: they ask or deny in every mode.
func Decide(mode Mode, rules Verdict, call ModeCall) Decision {
	if mode.Decide(call.Kind) == Deny && !(call.ReadOnlyHint && rules.Decision == Allow) {
		return Deny
	}
	switch {
	case rules.Decision == Deny:
		return Deny
	case call.OutsideRoots && rules.Decision != Allow && mode.OutsideRoots() != Allow:
		return mode.OutsideRoots()
	case rules.Decision == Allow:
		return Allow
	case rules.Decision == Ask:
		return mode.AskRule()
	}
	return mode.Decide(call.Kind)
}
