package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// Options configure an [Agent]. Loop and Registry are required.
type Options struct {
	// Loop runs the prompt turns.
	Loop Loop
	// Registry holds the deployment's tools; the bridge adds each
	// session's own tools (SessionTools, MCP) as scope-local tools under
	// the session id and removes them when the session closes.
	Registry *registry.Registry
	// Pipeline runs tool calls. When nil the bridge builds one over
	// Registry. Either way the bridge installs its policy listeners
	// (see [ListenerPlanMode] and the other listener names) and guards on
	// it; the embedder may add and reorder its own around them.
	Pipeline *pipeline.Pipeline
	// StateDir holds the durable session logs. Empty disables durable
	// sessions: loadSession, list, resume and delete are then not
	// advertised.
	StateDir string
	// AgentInfo names the agent in the initialize response.
	AgentInfo acp.Implementation
	// Prompt says which prompt content the loop understands beyond text
	// and resource links (image, audio, embedded resources); it is
	// advertised as promptCapabilities.
	Prompt acp.PromptCapabilities
	// MCPHTTP advertises mcpCapabilities.http: MCP connects http servers.
	MCPHTTP bool
	// SessionTools, optional, returns tools that exist only in one session
	// (for example a plan tool or a task tool bound to the session). It is
	// called when a session is created, loaded or resumed, and for every
	// live session by [Agent.RefreshSessionTools]; calls are serialised.
	SessionTools func(SessionInfo) []*registry.Definition
	// StructuredTurns says the loop honours [Turn.OutputSchema] (it ends a
	// turn with [Turn.SetStructured]): the bridge then advertises
	// agentCapabilities._meta.dshd.structuredTurns and accepts
	// _meta.dshd.outputSchema on session/prompt (see structured.go).
	StructuredTurns bool
	// Auth, optional, is for loops that need credentials.
	Auth *Auth
	// OnSessionClose, optional, runs when a session ends (session/close,
	// a load that replaces it, or the connection closing), after its turn
	// has ended: the place to free what the embedder keeps per session,
	// such as background commands.
	OnSessionClose func(SessionInfo)
	// MCP, optional, connects the MCP servers the editor passes in
	// session/new, session/load and session/resume.
	MCP MCPConnector
	// Instructions, optional, finds each session's project instructions,
	// skills and custom commands (package instructions): the bridge
	// advertises the custom commands and skills as slash commands (again
	// whenever the files change) and expands them into the prompt, offers
	// the skill tool while there are skills, attaches the instruction
	// files below the cwd to the first tool result under their directory,
	// and hands the system prompt's section to the loop through
	// [Turn.Instructions].
	Instructions *instructions.Library
	// Rules are the configured permission rules (settings files). Replace
	// them live with [Agent.SetRules].
	Rules policy.RuleSet
	// Grants, optional, keeps "Always allow" / "Always reject" answers
	// beyond the session they were given in (project and user scope, see
	// bridge/grants); without it every answer is remembered for its
	// session only.
	Grants *grants.Store
	// Remember is the scope new answers are remembered in: session,
	// project or user (default project with Grants, session without).
	// Change it live with [Agent.SetRememberScope].
	Remember policy.Scope
	// DefaultMode is the mode of new sessions (default [policy.ModeDefault]).
	DefaultMode policy.Mode
	// Protected are paths no tool may write (the daemon's settings files,
	// for example). The state directory and every root's .git directory
	// are always protected.
	Protected []string
	// Logger receives diagnostics (default slog.Default()). Never stdout.
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests inject a fixed one.
	Now func() time.Time
	// Tap, optional, sees every message of every connection in wire
	// order (for recording transcripts). It must not block, and must copy
	// msg if it keeps it (as with acp.WithTap).
	Tap func(dir acp.Direction, msg []byte)
	// NewSessionID generates session ids (default: 128 random bits in
	// hex); tests inject a deterministic one.
	NewSessionID func() string
	// Extensions, optional, answers ACP extension requests: each key is a
	// method name, which must start with "_" (ACP reserves the others; New
	// panics otherwise), and its handler's result is the reply. An error
	// is sent as a JSON-RPC error: the code of an [acp.Error] it wraps, or
	// -32603. Handlers run on their own goroutine, with a context that
	// ends when the request is cancelled or the connection closes.
	// A request without params reaches its handler with none (nil).
	// Extension requests not listed here are answered -32601, and
	// extension notifications are ignored.
	Extensions map[string]Extension
	// Sandbox configures the OS sandbox commands run in; replace it live
	// with [Agent.SetSandbox].
	Sandbox SandboxOptions
}

// Extension handles one ACP extension request (see [Options.Extensions]):
// params are the request's params as received.
type Extension func(ctx context.Context, params json.RawMessage) (any, error)

// MCPConnector connects a session's MCP servers and returns their tools
// (already named and validated by the connector). Close, when the session
// ends, disconnects them. A server that fails does not fail the session:
// Connect reports it in failures and returns the tools of the others.
//
// A server's tool list may change while the session lives
// (notifications/tools/list_changed): the connector then calls changed
// with the session's whole new list of MCP tools and the failures of
// listing them, and the session's tools are swapped in one step. changed
// may be called from any goroutine, even before Connect returned, until
// Close returned, one call at a time.
type MCPConnector interface {
	Connect(ctx context.Context, session SessionInfo, servers []acp.MCPServer, changed MCPToolsChanged) (tools []*registry.Definition, closer io.Closer, failures []error)
}

// MCPToolsChanged receives a session's new list of MCP tools.
type MCPToolsChanged func(tools []*registry.Definition, failures []error)

// Agent is the agent side of ACP: it serves editor connections, runs the
// sessions' prompt turns with the [Loop], and maps tool calls, cards and
// asks to the protocol. One Agent may serve several connections; sessions
// belong to the connection that created or loaded them.
type Agent struct {
	opts     Options
	registry *registry.Registry
	pipeline *pipeline.Pipeline
	log      *slog.Logger
	rules    atomic.Pointer[policy.RuleSet]
	mode     atomic.Pointer[policy.Mode] // default mode of new sessions
	remember atomic.Pointer[policy.Scope]
	store    *store
	sandbox  *sandboxState

	mu       sync.Mutex
	sessions map[string]*session // active sessions of every connection

	// toolsMu serialises the computing and swapping of session tools, so
	// the last refresh wins; toolsGen counts refreshes, so a session that
	// was being attached during one catches up (see attach).
	toolsMu  sync.Mutex
	toolsGen atomic.Uint64
}

// New builds an Agent and installs its listeners and guards on the
// pipeline.
func New(opts Options) *Agent {
	if opts.Registry == nil {
		opts.Registry = registry.New()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewSessionID == nil {
		opts.NewSessionID = randomID
	}
	if opts.DefaultMode == "" || !opts.DefaultMode.Valid() {
		opts.DefaultMode = policy.ModeDefault
	}
	for name := range opts.Extensions {
		if !strings.HasPrefix(name, "_") {
			panic(fmt.Sprintf("bridge: extension method %q must start with \"_\"", name))
		}
	}
	if opts.Pipeline == nil {
		opts.Pipeline = pipeline.New(opts.Registry, pipeline.WithLogger(opts.Logger))
	}
	a := &Agent{
		opts:     opts,
		registry: opts.Registry,
		pipeline: opts.Pipeline,
		log:      opts.Logger,
		sessions: map[string]*session{},
		sandbox:  newSandboxState(opts.Sandbox),
	}
	if opts.StateDir != "" {
		a.store = &store{dir: opts.StateDir, log: opts.Logger}
	}
	rs := opts.Rules
	a.rules.Store(&rs)
	mode := opts.DefaultMode
	a.mode.Store(&mode)
	_ = a.SetRememberScope(opts.Remember)
	a.install()
	return a
}

// SetRules replaces the configured permission rules; the next tool call of
// every session uses them. Remembered grants of sessions are kept.
func (a *Agent) SetRules(rs policy.RuleSet) { a.rules.Store(&rs) }

// SetDefaultMode changes the mode of sessions created from now on; an
// unknown mode is refused. Running sessions keep theirs.
func (a *Agent) SetDefaultMode(mode policy.Mode) error {
	if !mode.Valid() {
		return fmt.Errorf("bridge: unknown mode %q", mode)
	}
	a.mode.Store(&mode)
	return nil
}

// SetRememberScope changes where answers given from now on are
// remembered; empty means the default (project with [Options.Grants],
// else session). Project and user scope need Options.Grants (and user
// scope a user file): without them the answer is remembered for the
// session, and the option names say so.
func (a *Agent) SetRememberScope(scope policy.Scope) error {
	if scope == "" {
		scope = policy.ScopeProject
	}
	if _, err := policy.ParseScope(string(scope)); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	a.remember.Store(&scope)
	return nil
}

// rememberScope is the scope an answer given now is remembered in, for a
// session in cwd.
func (a *Agent) rememberScope(cwd string) policy.Scope {
	scope := *a.remember.Load()
	if a.opts.Grants == nil || a.opts.Grants.File(cwd, scope) == "" {
		return policy.ScopeSession
	}
	return scope
}

// storedRules are the grants kept beyond sessions for a session in cwd.
func (a *Agent) storedRules(cwd string) policy.RuleSet {
	if a.opts.Grants == nil {
		return policy.RuleSet{}
	}
	rs, _ := a.opts.Grants.RuleSet(cwd)
	return rs
}

// RefreshSessionTools recomputes the session tools ([Options.SessionTools])
// of every live session and swaps each session's set in one step, so a
// call sees the old set or the new one. Call it when what SessionTools
// returns changed, for example after the settings' tool lists changed:
// session tools are scope-local, so registry restrictions do not reach
// them. A session whose new set clashes with its other tools keeps the
// previous set (logged). MCP tools are not touched.
func (a *Agent) RefreshSessionTools() {
	if a.opts.SessionTools == nil && a.opts.Instructions == nil {
		return
	}
	a.toolsGen.Add(1)
	a.mu.Lock()
	all := slices.Collect(maps.Values(a.sessions))
	a.mu.Unlock()
	for _, s := range all {
		if err := s.refreshSessionTools(); err != nil {
			a.log.Warn("session tools not refreshed; keeping the previous ones", "session", s.id, "err", err)
		}
	}
}

// Rules returns the configured permission rules.
func (a *Agent) Rules() policy.RuleSet { return *a.rules.Load() }

// Registry returns the registry the agent resolves tools in.
func (a *Agent) Registry() *registry.Registry { return a.registry }

// Pipeline returns the pipeline the agent runs tool calls through.
func (a *Agent) Pipeline() *pipeline.Pipeline { return a.pipeline }

// sessionFor returns the active session a pipeline scope belongs to: the
// session id itself, or "<session id>/<child>" for subagents.
func (a *Agent) sessionFor(scope string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[scope]; s != nil {
		return s
	}
	for i := 0; i < len(scope); i++ {
		if scope[i] == '/' {
			return a.sessions[scope[:i]]
		}
	}
	return nil
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
