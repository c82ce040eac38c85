package bridge

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
)

// ConfigSandbox is the id of the sandbox config option.
const ConfigSandbox = "sandbox"

// ListenerEscalation asks a person about every command the model wants
// to run outside the OS sandbox, in every mode, before any rule or mode
// could allow it.
const ListenerEscalation = "bridge/escalation"

// SandboxOptions configure the OS sandbox the session's commands run in
// (package sandbox). The zero value is the default: workspace-write, with
// the network, not required.
type SandboxOptions struct {
	// Mode is the sandbox mode of new sessions (default workspace-write).
	Mode sandbox.Mode
	// NoNetwork cuts commands off the network (sandbox.network: false).
	NoNetwork bool
	// WritableRoots are directories commands may write besides the
	// session's roots and the temp directory.
	WritableRoots []string
	// Required refuses to start a command where the sandbox cannot run.
	Required bool
	// Protected are more paths that stay read-only inside writable roots
	// (the daemon's settings directory and files). Every root's .git and
	// .dshd and the state directory always are.
	Protected []string
	// Probe says what the sandbox can do here (default [sandbox.Probe]).
	Probe func() sandbox.Availability
	// QuickProbe is what Probe will say, as far as it can be told without
	// starting anything (default [sandbox.QuickProbe] when Probe is unset
	// too; nil otherwise: wait for Probe). A session/new that comes before
	// Probe has answered is answered from it, and the sandbox option is
	// sent again once Probe has.
	QuickProbe func() sandbox.Availability
}

// sandboxState is the agent's live sandbox settings and what the machine
// offers, probed once.
type sandboxState struct {
	mu      sync.Mutex
	opts    SandboxOptions
	avail   func() sandbox.Availability // the probe, once
	quick   func() sandbox.Availability // nil: wait for the probe
	started atomic.Bool                 // avail is running or has run
	ended   chan struct{}               // closed when avail has its answer
}

func newSandboxState(o SandboxOptions) *sandboxState {
	probe, quick := o.Probe, o.QuickProbe
	if probe == nil {
		probe, quick = sandbox.Probe, sandbox.QuickProbe
	}
	st := &sandboxState{opts: o, quick: quick, ended: make(chan struct{})}
	st.avail = sync.OnceValue(func() sandbox.Availability {
		st.started.Store(true)
		defer close(st.ended)
		return probe()
	})
	return st
}

// probeSettleTimeout bounds how long the end of a connection waits for a
// probe still running.
const probeSettleTimeout = 2 * time.Second

// settle waits for a probe that is running to end, up to
// probeSettleTimeout: its process does not outlive the daemon then, and
// what it found is kept (sandbox.SetProbeCache) for the next daemon, which
// an editor that opens and closes one quickly would otherwise never let it
// finish.
func (st *sandboxState) settle() {
	if !st.started.Load() {
		return
	}
	timer := time.NewTimer(probeSettleTimeout)
	defer timer.Stop()
	select {
	case <-st.ended:
	case <-timer.C:
	}
}

// probed reports whether the probe has its answer.
func (st *sandboxState) probed() bool {
	select {
	case <-st.ended:
		return true
	default:
		return false
	}
}

// availNow is what is known of the sandbox without waiting for the probe:
// its answer once it has one (final), otherwise the quick one. A quick
// "unavailable" is final too: the probe starts with the same checks.
func (st *sandboxState) availNow() (a sandbox.Availability, final bool) {
	if st.quick == nil || st.probed() {
		return st.avail(), true
	}
	a = st.quick()
	return a, !a.Available()
}

// SetSandbox replaces the sandbox settings for the next command of every
// session (a session's own choice of mode stays).
func (a *Agent) SetSandbox(o SandboxOptions) error {
	if o.Mode != "" {
		if _, err := sandbox.ParseMode(string(o.Mode)); err != nil {
			return err
		}
	}
	a.sandbox.mu.Lock()
	defer a.sandbox.mu.Unlock()
	probe, quick := a.sandbox.opts.Probe, a.sandbox.opts.QuickProbe
	a.sandbox.opts = o
	a.sandbox.opts.Probe, a.sandbox.opts.QuickProbe = probe, quick
	return nil
}

func (a *Agent) sandboxOptions() SandboxOptions {
	a.sandbox.mu.Lock()
	defer a.sandbox.mu.Unlock()
	return a.sandbox.opts
}

// SandboxAvailability reports what the sandbox can do on this machine.
func (a *Agent) SandboxAvailability() sandbox.Availability { return a.sandbox.avail() }

func (s *session) currentSandboxMode() sandbox.Mode {
	s.mu.Lock()
	m := s.sandboxMode
	s.mu.Unlock()
	if m == "" {
		m = s.agent.sandboxOptions().Mode
	}
	if m == "" {
		m = sandbox.ModeWorkspaceWrite
	}
	return m
}

func (s *session) setSandboxMode(id string) error {
	m, err := sandbox.ParseMode(id)
	if err != nil || id == "" {
		return invalidParams("unknown value for the sandbox option: want workspace-write, read-only or off")
	}
	s.mu.Lock()
	s.sandboxMode = m
	s.mu.Unlock()
	return nil
}

// sandboxPolicy is the policy of the session's next command; ok is false
// when it runs unsandboxed (mode off, or the sandbox cannot run here and
// is not required); err when it is required and cannot run.
func (s *session) sandboxPolicy() (p sandbox.Policy, ok bool, err error) {
	return s.agent.sandboxPolicy(s.roots, s.currentSandboxMode())
}

// SandboxPolicy is the policy of a command run for a session with these
// roots in the configured mode (for processes the bridge does not start
// itself, such as stdio MCP servers); ok and err as for
// [host.Sandboxing].
func (a *Agent) SandboxPolicy(roots []string) (p sandbox.Policy, ok bool, err error) {
	return a.sandboxPolicy(roots, "")
}

func (a *Agent) sandboxPolicy(roots []string, mode sandbox.Mode) (p sandbox.Policy, ok bool, err error) {
	o := a.sandboxOptions()
	if mode == "" {
		mode = o.Mode
	}
	if mode == "" {
		mode = sandbox.ModeWorkspaceWrite
	}
	p = sandbox.Policy{
		Mode:          mode,
		Network:       !o.NoNetwork,
		WritableRoots: append(slices.Clone(roots), o.WritableRoots...),
	}
	for _, r := range roots {
		p.Protected = append(p.Protected, filepath.Join(r, ".git"), filepath.Join(r, ".dshd"))
	}
	if d := a.opts.StateDir; d != "" {
		p.Protected = append(p.Protected, d)
	}
	p.Protected = append(p.Protected, o.Protected...)
	if p.Mode == sandbox.ModeOff {
		return p, false, nil
	}
	if av := a.SandboxAvailability(); !av.Available() {
		if o.Required {
			return p, false, fmt.Errorf("sandbox.required is set and the OS sandbox cannot run here: %s", av.Reason)
		}
		return p, false, nil
	}
	return p, true, nil
}

// sandboxMeta is the `_meta.dshd.sandbox` object of a command's card and
// permission request: what it will run under.
func (s *session) sandboxMeta(subjects []registry.Subject) (meta map[string]any, text string) {
	if escalated, why := unsandboxed(subjects); escalated {
		return map[string]any{"mode": string(sandbox.ModeOff), "network": true, "writableRoots": []string{}, "escalated": true, "justification": why},
			"runs UNSANDBOXED, outside the OS sandbox: it may write anywhere you can and use the network"
	}
	p, ok, err := s.sandboxPolicy()
	if ok || p.Mode == sandbox.ModeOff {
		return p.Meta(), p.Describe()
	}
	// Unavailable: the command runs unconfined, or not at all.
	meta = sandbox.Policy{Mode: sandbox.ModeOff, Network: true}.Meta()
	meta["available"] = false
	if err != nil {
		return meta, "will not run: " + err.Error()
	}
	return meta, "runs without the OS sandbox, which cannot run here (" + s.agent.SandboxAvailability().Reason + ")"
}

// hasCommand reports a call that runs a shell command.
func hasCommand(subjects []registry.Subject) bool {
	return slices.ContainsFunc(subjects, func(s registry.Subject) bool { return s.Kind == registry.SubjectCommand })
}

func unsandboxed(subjects []registry.Subject) (bool, string) {
	for _, s := range subjects {
		if s.Kind == registry.SubjectCommand && s.Unsandboxed {
			return true, s.Justification
		}
	}
	return false, ""
}

func (a *Agent) escalationListener(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
	escalated, why := unsandboxed(exec.Subjects())
	if !escalated {
		return next()
	}
	if strings.TrimSpace(why) == "" {
		return pipeline.Deny("escalate: true needs a justification saying why the command must run outside the sandbox")
	}
	// Neither a rule nor the mode (bypassPermissions included) may allow
	// this: a person decides, every time.
	return pipeline.Ask("the model asks to run this command UNSANDBOXED, outside the OS sandbox, because: " + why)
}

// sandboxConfigOption is the sandbox picker; where the sandbox cannot run
// it says so and why. Before the probe has answered (final false) its
// _meta leaves "namespaces" out.
func (s *session) sandboxConfigOption(a sandbox.Availability, final bool) acp.SessionConfigOption {
	names := map[sandbox.Mode][2]string{
		sandbox.ModeWorkspaceWrite: {"Workspace write", "Commands write only inside the workspace and the temp directory; .git and .dshd stay read-only."},
		sandbox.ModeReadOnly:       {"Read-only", "Commands write nothing but a private temp directory."},
		sandbox.ModeOff:            {"Off", "Commands run without the OS sandbox (the text guards still apply)."},
	}
	desc := "The OS sandbox (Landlock, namespaces) every command runs in."
	if !a.Available() {
		desc = "Unavailable here: " + a.Reason + ". Commands run under the text guards only."
	}
	meta := map[string]any{"available": a.Available(), "reason": a.Reason}
	if final {
		meta["namespaces"] = a.Namespaces
	}
	var opts []acp.SelectOption
	for _, m := range sandbox.Modes {
		name := names[m][0]
		if !a.Available() && m != sandbox.ModeOff {
			name += " (unavailable)"
		}
		opts = append(opts, acp.SelectOption{Value: string(m), Name: name, Description: acp.Ptr(names[m][1])})
	}
	return acp.SessionConfigOption{Value: &acp.SelectConfigOption{
		ID:           ConfigSandbox,
		Name:         "Sandbox",
		Description:  acp.Ptr(desc),
		Category:     acp.Ptr("_sandbox"),
		CurrentValue: string(s.currentSandboxMode()),
		Options:      acp.SelectOptions{Flat: opts},
		Meta:         metaJSON(map[string]any{MetaKey: meta}),
	}}
}
