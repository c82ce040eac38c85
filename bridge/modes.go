package bridge

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
)

// ConfigMode is the id of the mode config option.
const ConfigMode = "mode"

// modeState is the session's `modes` for new/load/resume responses.
func (s *session) modeState() *acp.SessionModeState {
	st := &acp.SessionModeState{CurrentModeID: string(s.currentMode())}
	for _, m := range policy.Modes() {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{ID: string(m.ID), Name: m.Name, Description: acp.Ptr(m.Description)})
	}
	return st
}

// configOptions is the complete list of the session's config options.
func (s *session) configOptions() []acp.SessionConfigOption {
	return s.configOptionsWith(s.agent.SandboxAvailability(), true)
}

// configOptionsWith is configOptions with the sandbox's availability as
// known so far (see sandboxConfigOption).
func (s *session) configOptionsWith(sandboxAvail sandbox.Availability, final bool) []acp.SessionConfigOption {
	var opts []acp.SelectOption
	for _, m := range policy.Modes() {
		opts = append(opts, acp.SelectOption{Value: string(m.ID), Name: m.Name, Description: acp.Ptr(m.Description)})
	}
	list := []acp.SessionConfigOption{{Value: &acp.SelectConfigOption{
		ID:           ConfigMode,
		Name:         "Mode",
		Description:  acp.Ptr("How much the agent may do without asking."),
		Category:     acp.Ptr(acp.ConfigCategoryMode),
		CurrentValue: string(s.currentMode()),
		Options:      acp.SelectOptions{Flat: opts},
	}}}
	list = append(list, s.sandboxConfigOption(sandboxAvail, final))
	if lc, ok := s.agent.opts.Loop.(SessionConfigurer); ok {
		list = append(list, lc.SessionConfigOptions(s.id)...)
	}
	return list
}

// Names of the pre-execute listeners and guards the bridge installs, in
// waterfall order. Embedders may place their own listeners around them.
const (
	// ListenerPlanMode denies the calls the mode denies whatever the rules
	// say ([policy.Mode.Decide]: mutating calls in plan mode).
	ListenerPlanMode = "bridge/plan-mode"
	// ListenerDenyRules denies calls a deny rule (configured or
	// remembered) matches.
	ListenerDenyRules = "bridge/deny-rules"
	// ListenerRoots decides a call that touches a path outside the
	// session's roots as the mode says ([policy.Mode.OutsideRoots]: it
	// asks, naming the path, except in bypassPermissions) unless an allow
	// rule covers it. It is an ask, not a guard: the landing guard then
	// makes sure the tool opens exactly the path that was judged.
	ListenerRoots = "bridge/roots"
	// ListenerRules applies allow rules, and ask rules as the mode says
	// ([policy.Mode.AskRule]).
	ListenerRules = "bridge/rules"
	// ListenerMode decides what no rule decided, by the session mode
	// ([policy.Mode.Decide]).
	ListenerMode = "bridge/mode"
	// GuardProtected denies writes to protected paths.
	GuardProtected = "bridge/protected"
	// GuardLanding lands the call's paths again, before it runs and after
	// a permission prompt, and denies the call when one no longer lands
	// where the policy judged it (a symlink appeared or moved meanwhile).
	GuardLanding = "bridge/landing"
)

func (a *Agent) install() {
	must := func(err error) {
		if err != nil {
			a.log.Error("installing bridge listener", "err", err)
		}
	}
	must(a.pipeline.AddPre(ListenerPlanMode, a.planMode, pipeline.Last))
	must(a.pipeline.AddPre(ListenerDenyRules, a.denyRules, pipeline.Last))
	must(a.pipeline.AddPre(ListenerEscalation, a.escalationListener, pipeline.Last))
	must(a.pipeline.AddPre(ListenerRoots, a.rootsListener, pipeline.Last))
	must(a.pipeline.AddPre(ListenerRules, a.rulesListener, pipeline.Last))
	must(a.pipeline.AddPre(ListenerMode, a.modeListener, pipeline.Last))
	must(a.pipeline.AddGuard(GuardLanding, a.landingGuard))
	must(a.pipeline.AddGuard(GuardProtected, a.protectedGuard))
	// Innermost, so the images are taken right around the tool itself.
	must(a.pipeline.AddWrapper(WrapperUndo, a.undoImages, pipeline.Last))
}

// landingGuard is root confinement run again where the guards run: after
// the waterfall and again after a permission prompt. After a prompt (the
// human may have taken minutes) it lands the call's paths afresh and
// compares with the landing the listeners judged and the permission
// request named: a path that fails to resolve, or lands elsewhere or in
// another root now, denies the call. Before any prompt the listeners'
// landing is microseconds old and is what the guard checks: landing again
// would cost every call its lstat chain once more and close no window,
// since the tool opens the landing beneath its root anyway.
func (a *Agent) landingGuard(exec *pipeline.Execution) string {
	s := a.sessionFor(exec.Scope())
	if s == nil {
		return ""
	}
	subjects := exec.Subjects()
	h := s.callHost(exec)
	if h != nil && !h.wasAsked() {
		return unresolved(s.landing(exec, subjects))
	}
	fresh := s.land(subjects)
	if reason := unresolved(fresh); reason != "" {
		return reason
	}
	if h == nil {
		return ""
	}
	judged := h.judged(func() policy.Landing { return fresh })
	if judged.Same(fresh) {
		// The fresh landing is the same places seen just now: the
		// protected guard judges through its lookups.
		h.relanded(fresh)
		return ""
	}
	was, now := judged.Paths(), fresh.Paths()
	for i := range now {
		if i < len(was) && (was[i].Abs != now[i].Abs || was[i].Root != now[i].Root) {
			return fmt.Sprintf("%q changed while the call was being decided: it was judged to land at %s and now lands at %s "+
				"(a symlink appeared or moved); the call did not run", now[i].Written, was[i].Abs, now[i].Abs)
		}
	}
	return "the call's paths changed while it was being decided; the call did not run"
}

// unresolved is the denial of a landing with a path that does not
// resolve ("" when every path does).
func unresolved(l policy.Landing) string {
	for _, lp := range l.Paths() {
		if lp.Err != nil {
			return fmt.Sprintf("cannot resolve the path %q: %v", lp.Written, lp.Err)
		}
	}
	return ""
}

func (a *Agent) planMode(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	s := a.sessionFor(exec.Scope())
	if s == nil || s.currentMode().Decide(exec.Kind()) != policy.Deny {
		return next()
	}
	// A tool that only claims to be read-only (an MCP server's hint) runs
	// in plan mode when a permission rule, the user's word, allows it.
	if def, ok := exec.Definition(); ok && def.ReadOnlyHint && s.verdict(exec).Decision == policy.Allow {
		return next()
	}
	// The first sentence is for the person too (see deniedText); the rest
	// tells the model what to do instead.
	return pipeline.Deny(fmt.Sprintf("the session is in plan mode, which is read-only, so %s does not run. "+
		"Do not retry it. Finish exploring with read-only tools, then present your plan to the user and wait for them to leave plan mode.", callPhrase(exec)))
}

func (a *Agent) denyRules(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	s := a.sessionFor(exec.Scope())
	if s == nil {
		return next()
	}
	if v := s.verdict(exec); v.Decision == policy.Deny {
		return pipeline.Deny(fmt.Sprintf("the permission rule \"%s\" denies this call", v.Rule))
	}
	return next()
}

func (a *Agent) rootsListener(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	s := a.sessionFor(exec.Scope())
	if s == nil || s.currentMode().OutsideRoots() == policy.Allow {
		return next()
	}
	var outside []string
	for _, lp := range s.landing(exec, exec.Subjects()).Paths() {
		if lp.Err != nil {
			return pipeline.Deny(fmt.Sprintf("cannot resolve the path %q: %v", lp.Written, lp.Err))
		}
		if lp.Root == "" {
			outside = append(outside, lp.Abs)
		}
	}
	if len(outside) == 0 {
		return next()
	}
	if v := s.verdict(exec); v.Decision == policy.Allow {
		return next() // an explicit grant covers the path
	}
	return pipeline.Ask(fmt.Sprintf("%s is outside the workspace (%s)", strings.Join(outside, ", "), strings.Join(s.roots, ", ")))
}

func (a *Agent) rulesListener(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	s := a.sessionFor(exec.Scope())
	if s == nil {
		return next()
	}
	switch v := s.verdict(exec); v.Decision {
	case policy.Allow:
		return pipeline.AllowOnce()
	case policy.Ask:
		if s.currentMode().AskRule() == policy.Allow {
			return pipeline.AllowOnce()
		}
		return pipeline.Ask(fmt.Sprintf("the permission rule \"%s\" asks before this call", v.Rule))
	}
	return next()
}

func (a *Agent) modeListener(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	s := a.sessionFor(exec.Scope())
	if s == nil {
		return next()
	}
	kind := exec.Kind()
	mode := s.currentMode()
	if mode.Decide(kind) == policy.Allow {
		// ListenerRoots already asked for paths outside the roots.
		return pipeline.AllowOnce()
	}
	// Say why it asks, not what the call does: a read-only command asks
	// too, and must not be described as changing anything.
	info, _ := mode.Info()
	switch {
	case kind == presentation.KindExecute:
		return pipeline.Ask(fmt.Sprintf("commands ask first in the %s mode", info.Name))
	case policy.ChangesFiles(kind):
		return pipeline.Ask(fmt.Sprintf("file changes ask first in the %s mode", info.Name))
	}
	return pipeline.Ask(fmt.Sprintf("the %s tool may change things, so it asks first in the %s mode", exec.ToolName(), info.Name))
}

// callPhrase names a call for a person: "this command", "this file
// change", or "the <tool> tool".
func callPhrase(exec *pipeline.Execution) string {
	switch k := exec.Kind(); {
	case k == presentation.KindExecute:
		return "this command"
	case policy.ChangesFiles(k):
		return "this file change"
	}
	return "the " + exec.ToolName() + " tool"
}

// protectedGuard denies writes to the daemon's state directory, its policy
// files and every .git directory: the agent cannot grant itself
// permissions by editing settings or rewrite repository internals. A shell
// command is opaque, so it is denied when it names such a path at all
// (see [policy.CommandPaths]; best effort: a command that computes the
// path gets past it, as docs/rough_edges.md says).
func (a *Agent) protectedGuard(exec *pipeline.Execution) string {
	var cwd string
	if s := a.sessionFor(exec.Scope()); s != nil {
		cwd = s.cwd
	}
	protected := a.opts.Protected
	if a.opts.Grants != nil && cwd != "" {
		// The remembered answers are the daemon's to write, never a
		// tool's: a tool that could write them could grant itself.
		protected = append(slices.Clip(protected), a.opts.Grants.Files(cwd)...)
	}
	subjects := exec.Subjects()
	// The call's landing is where its paths land now, resolved once for
	// the call: the listeners' landing, microseconds old, or after a
	// permission prompt the landing guard's fresh one. Its lookups serve
	// the protected entries too, unless it is from before a prompt.
	var landing policy.Landing
	fresh := false
	if s := a.sessionFor(exec.Scope()); s != nil && cwd != "" {
		if h := s.callHost(exec); h != nil {
			landing = s.landing(exec, subjects)
			fresh = h.landingFresh()
		}
	}
	judge := landing // whose lookups the protected entries are judged through
	if !fresh {
		judge = policy.Landing{} // none: look at the disk afresh
	}
	for _, subj := range subjects {
		switch {
		case subj.Kind == registry.SubjectPath && subj.Writes:
			if lp, ok := landing.Lookup(subj.Value); ok && lp.Err == nil {
				if judge.Protected(cwd, lp.Abs, a.opts.StateDir, protected) {
					return fmt.Sprintf("%q is protected: tools may not write the daemon's settings and state or .git internals", subj.Value)
				}
				continue
			}
			if policy.Protected(cwd, subj.Value, a.opts.StateDir, protected) {
				return fmt.Sprintf("%q is protected: tools may not write the daemon's settings and state or .git internals", subj.Value)
			}
		case subj.Kind == registry.SubjectCommand && cwd != "":
			for _, cp := range policy.CommandPaths(subj.Value, cwd, os.Getenv) {
				// Only a path that resolves counts: a word that is no
				// path at all (too long for a file name, say) is fine.
				abs, err := policy.Resolve(cp.Dir, cp.Path)
				if err == nil && policy.Protected(cwd, abs, a.opts.StateDir, protected) {
					return fmt.Sprintf("the command names %q, which is protected: commands may not touch the daemon's settings and state or .git internals (run git itself for the repository)", cp.Path)
				}
			}
		}
	}
	return ""
}
