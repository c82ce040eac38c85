package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/internal/work"
	"github.com/dsh-tools/dshd/policy"
)

// rawUpdate is the params of a session/update whose update is already
// JSON (encoded once for the log and the wire, or read back from the log):
// it is copied into the message, not decoded and re-encoded.
type rawUpdate struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// sendRawUpdate sends a session/update whose update is already JSON. It is
// the bridge's one untyped message: acp.ClientConn.SessionUpdate takes a
// decoded update, and acp sends pre-encoded ones through Conn.Notify (see
// its doc); every other call to the editor is a typed ClientConn method.
func (c *conn) sendRawUpdate(ctx context.Context, sessionID string, update json.RawMessage) error {
	return c.peer().Notify(ctx, acp.MethodSessionUpdate, rawUpdate{sessionID, update})
}

// conn is the bridge's state for one editor connection.
type conn struct {
	agent *Agent
	// rpc is the connection, set before its first message is read; ready
	// is closed then.
	rpc   *acp.ClientConn
	ready chan struct{}

	mu          sync.Mutex
	initialized bool
	clientCaps  acp.ClientCapabilities
	features    clientFeatures
	sessions    map[string]*session

	// afterReply holds actions to start once the response naming a session
	// is on the wire (see tap).
	pendingMu  sync.Mutex
	afterReply map[string]func()
	pending    atomic.Int32
}

// Serve serves one editor connection over rwc (newline-delimited JSON-RPC)
// until the editor closes it or ctx is cancelled. When it returns, every
// session of the connection has been cancelled and closed (its log made
// durable and its MCP servers stopped).
func (a *Agent) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	c := &conn{agent: a, sessions: map[string]*session{}, afterReply: map[string]func(){}, ready: make(chan struct{})}
	out := newCoalescer(rwc)
	defer out.Close()
	ac := acp.ConnectClient(ctx, out, func(cc *acp.ClientConn) acp.Router {
		c.rpc = cc
		close(c.ready)
		return c.routes()
	}, acp.WithLogger(a.log), acp.WithTap(c.tap))
	select {
	case <-ac.Done():
	case <-ctx.Done():
		_ = ac.Close()
	}
	c.closeAll()
	a.sandbox.settle()
	return ctx.Err()
}

// peer returns the connection to the editor.
func (c *conn) peer() *acp.ClientConn {
	<-c.ready
	return c.rpc
}

func (c *conn) routes() acp.Router {
	r := acp.Router{
		acp.MethodInitialize:             acp.SyncRoute(c.initialize),
		acp.MethodAuthenticate:           acp.StagedRoute(c.authenticate),
		acp.MethodLogout:                 acp.StagedRoute(c.logout),
		acp.MethodSessionNew:             acp.AsyncRoute(c.newSession),
		acp.MethodSessionLoad:            acp.StagedRoute(c.loadSession),
		acp.MethodSessionResume:          acp.StagedRoute(c.resumeSession),
		acp.MethodSessionFork:            acp.StagedRoute(c.forkSession),
		acp.MethodSessionList:            acp.AsyncRoute(c.listSessions),
		acp.MethodSessionClose:           acp.StagedRoute(c.closeSession),
		acp.MethodSessionDelete:          acp.StagedRoute(c.deleteSession),
		acp.MethodSessionSetMode:         acp.SyncRoute(c.setMode),
		acp.MethodSessionSetConfigOption: acp.SyncRoute(c.setConfigOption),
		acp.MethodSessionPrompt:          acp.StagedRoute(c.prompt),
		acp.MethodSessionCancel:          acp.NotificationRoute(c.cancel),
	}
	// Extension names start with "_" (checked by New), so they never
	// shadow a protocol method; the others stay unknown (-32601).
	for name, h := range c.agent.opts.Extensions {
		r[name] = extensionRoute(name, h)
	}
	return r
}

// extensionRoute runs an extension handler on its own goroutine: it may be
// slow, and must not hold up the read goroutine. The params arrive as
// received (acp checks that they are present).
func extensionRoute(name string, h Extension) acp.Route {
	return acp.AsyncRoute(func(ctx context.Context, p *json.RawMessage) (*any, error) {
		res, err := h(ctx, *p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if res == nil {
			return nil, nil // replied as {}: results are objects
		}
		return &res, nil
	})
}

// SupportedProtocolVersion is the ACP version the bridge speaks.
const SupportedProtocolVersion = acp.ProtocolVersion1

func (c *conn) initialize(_ context.Context, p *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	a := c.agent
	c.mu.Lock()
	if c.initialized {
		c.mu.Unlock()
		// The client's capabilities are read without a lock by every
		// session of the connection: they are fixed by the first
		// initialize, as ACP negotiates them once per connection.
		return nil, acp.NewError(acp.CodeInvalidRequest, "the connection is already initialized")
	}
	c.initialized = true
	if p.ClientCapabilities != nil {
		c.clientCaps = *p.ClientCapabilities
	}
	c.features = featuresOf(c.clientCaps)
	c.mu.Unlock()

	prompt := a.opts.Prompt
	caps := &acp.AgentCapabilities{
		LoadSession:        a.store != nil,
		PromptCapabilities: &prompt,
		MCPCapabilities:    &acp.MCPCapabilities{HTTP: a.opts.MCPHTTP},
		SessionCapabilities: &acp.SessionCapabilities{
			Close:                 &acp.Capability{},
			AdditionalDirectories: &acp.Capability{},
		},
	}
	if a.store != nil {
		caps.SessionCapabilities.List = &acp.Capability{}
		caps.SessionCapabilities.Resume = &acp.Capability{}
		caps.SessionCapabilities.Delete = &acp.Capability{}
		caps.SessionCapabilities.Fork = &acp.Capability{} // UNSTABLE in ACP v1
	}
	if a.opts.StructuredTurns {
		caps.Meta = structuredTurnsCapability()
	}
	if a.opts.Auth != nil && a.opts.Auth.Logout != nil {
		caps.Auth = &acp.AgentAuthCapabilities{Logout: &acp.Capability{}}
	}
	info := a.opts.AgentInfo
	if info.Name == "" {
		info = acp.Implementation{Name: "dshd", Version: "dev"}
	}
	// The sandbox probe starts a process (~15 ms): it runs beside the
	// answer, so that the first session/new, which shows the sandbox
	// option and waits for the probe, seldom waits long. It is counted
	// work from before the answer: a baseline taken at rest waits for it.
	probed := work.Start("sandbox probe")
	go func() {
		defer probed()
		a.SandboxAvailability()
	}()
	// Negotiation: echo a version we speak, otherwise answer ours; never fail.
	return &acp.InitializeResponse{ProtocolVersion: SupportedProtocolVersion, AgentCapabilities: caps, AgentInfo: &info,
		AuthMethods: a.authMethods(c.clientCaps)}, nil
}

func invalidParams(format string, args ...any) error {
	return fmt.Errorf("%w: %s", acp.ErrInvalidParams, fmt.Sprintf(format, args...))
}

// checkDirs validates the cwd and additional directories of new/load/resume.
func checkDirs(cwd string, extra []string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalidParams("cwd must be an absolute path, got %q", cwd)
	}
	for _, d := range extra {
		if !filepath.IsAbs(d) {
			return invalidParams("additionalDirectories must be absolute paths, got %q", d)
		}
	}
	return nil
}

func (c *conn) newSession(ctx context.Context, p *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	if err := c.agent.checkAuth(); err != nil {
		return nil, err
	}
	if err := checkDirs(p.Cwd, p.AdditionalDirectories); err != nil {
		return nil, err
	}
	a := c.agent
	cwd := filepath.Clean(p.Cwd)
	s := newSession(a, c, a.opts.NewSessionID(), cwd, cleanAll(p.AdditionalDirectories), a.opts.Now())
	// Set before the session becomes visible to other requests (attach).
	s.announced = make(chan struct{})
	if a.store != nil {
		w, err := a.store.create(s.header())
		if err != nil {
			return nil, fmt.Errorf("%w: creating the session log: %v", acp.ErrInternal, err)
		}
		s.log = w
	}
	failures := c.attach(ctx, s, p.MCPServers)
	// The first session of a daemon is often asked for while the sandbox
	// probe (a start of the launcher, some 20 ms) still runs: it is not
	// waited for here, and the options are sent again once it has answered.
	sandboxAvail, final := a.sandbox.availNow()
	resp := &acp.NewSessionResponse{SessionID: s.id, Modes: s.modeState(), ConfigOptions: s.configOptionsWith(sandboxAvail, final)}
	// The session exists for the editor only once this response is out;
	// its first updates follow on their own goroutine.
	c.whenAnswered(s.id, func() { c.announce(s, failures, !final) })
	return resp, nil
}

// attach registers the session and connects its session tools and MCP
// servers.
func (c *conn) attach(ctx context.Context, s *session, servers []acp.MCPServer) []error {
	a := c.agent
	info := s.info()
	var failures []error
	s.openProject()
	gen := a.toolsGen.Load()
	if err := s.refreshSessionTools(); err != nil {
		failures = append(failures, fmt.Errorf("session tools: %w", err))
	}
	if a.opts.MCP != nil && len(servers) > 0 {
		defs, closer, errs := a.opts.MCP.Connect(ctx, info, servers, s.mcpToolsChanged)
		failures = append(failures, errs...)
		s.mu.Lock()
		s.mcp = closer
		if s.mcpPending != nil { // the list changed already
			defs, s.mcpPending = *s.mcpPending, nil
		}
		if len(defs) > 0 {
			if err := a.registry.AddScoped(s.id, defs...); err != nil {
				failures = append(failures, fmt.Errorf("MCP tools: %w", err))
			} else {
				s.mcpTools = toolNames(defs)
			}
		}
		s.mcpAttached = true
		s.mu.Unlock()
	}
	for _, f := range failures {
		a.log.Warn("session setup", "session", s.id, "err", f)
	}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	c.mu.Lock()
	c.sessions[s.id] = s
	c.mu.Unlock()
	// A refresh that started before the session was registered above did
	// not see it; the session's tools may be stale, so it catches up.
	if a.toolsGen.Load() != gen {
		if err := s.refreshSessionTools(); err != nil {
			a.log.Warn("session tools not refreshed; keeping the previous ones", "session", s.id, "err", err)
		}
	}
	return failures
}

// tap sees every message in wire order. It starts the actions waiting for
// the response that names their session (session/new), so a new session's
// first updates follow its response without guessing at timing.
func (c *conn) tap(dir acp.Direction, msg []byte) {
	if t := c.agent.opts.Tap; t != nil {
		t(dir, msg)
	}
	if dir != acp.Outbound || c.pending.Load() == 0 || !bytes.Contains(msg, []byte(`"result"`)) {
		return
	}
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	for id, run := range c.afterReply {
		if bytes.Contains(msg, []byte(`"sessionId":`+strconv.Quote(id))) {
			delete(c.afterReply, id)
			c.pending.Add(-1)
			go run()
		}
	}
}

// whenAnswered runs f once the response carrying session id is written.
func (c *conn) whenAnswered(id string, f func()) {
	c.pendingMu.Lock()
	c.afterReply[id] = f
	c.pending.Add(1)
	c.pendingMu.Unlock()
}

// announce sends a new session's first updates: the slash commands, any
// MCP server that failed to start, and, when the response's sandbox option
// was built before the probe answered (sandboxPending), the options again
// once it has. A session closed meanwhile announces nothing: no update
// follows its close.
func (c *conn) announce(s *session, failures []error, sandboxPending bool) {
	defer close(s.announced)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	s.advertise(true)
	for _, f := range append(failures, s.grantProblems()...) {
		s.sendUpdate(&acp.AgentMessageChunk{Content: acp.Text("⚠ " + f.Error())})
	}
	if sandboxPending {
		s.agent.SandboxAvailability()
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.sendUpdate(&acp.ConfigOptionUpdate{ConfigOptions: s.configOptions()})
		}
	}
}

// grantProblems are the grants files of the session's project and user
// that cannot be used: they are ignored, and the person is told once, when
// the session starts (and by /permissions).
func (s *session) grantProblems() []error {
	if s.agent.opts.Grants == nil {
		return nil
	}
	_, errs := s.agent.opts.Grants.Grants(s.cwd)
	out := make([]error, len(errs))
	for i, err := range errs {
		out[i] = fmt.Errorf("remembered permissions ignored: %w", err)
	}
	return out
}

func cleanAll(ps []string) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = filepath.Clean(p)
	}
	return out
}

func (c *conn) session(id string) (*session, error) {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s == nil {
		return nil, acp.NewError(acp.CodeResourceNotFound, fmt.Sprintf("unknown session %q", id))
	}
	return s, nil
}

func (c *conn) prompt(ctx context.Context, p *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
	s, err := c.session(p.SessionID)
	if err != nil {
		return acp.Reply[acp.PromptResponse]{}, err
	}
	schema, err := c.agent.outputSchemaOf(p.Meta)
	if err != nil {
		return acp.Reply[acp.PromptResponse]{}, err
	}
	// Registered here, on the read goroutine: a session/cancel read after
	// this prompt always finds the turn, and a second prompt is refused.
	t, err := s.startTurn(ctx, p.Prompt)
	if err != nil {
		return acp.Reply[acp.PromptResponse]{}, err
	}
	t.outputSchema = schema
	return acp.Later(func() (*acp.PromptResponse, error) {
		// A prompt that follows session/new at once must not overtake
		// the session's announcement: the turn's updates and its
		// response come after it.
		if s.announced != nil {
			select {
			case <-s.announced:
			case <-t.ctx.Done():
			}
		}
		resp, err := s.runTurn(t)
		if err != nil {
			return nil, err
		}
		return &resp, nil
	}), nil
}

func (c *conn) cancel(_ context.Context, p *acp.CancelNotification) error {
	s, err := c.session(p.SessionID)
	if err != nil {
		return err
	}
	s.cancelTurn()
	return nil
}

func (c *conn) setMode(_ context.Context, p *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	s, err := c.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if !policy.Mode(p.ModeID).Valid() {
		return nil, invalidParams("unknown mode %q", p.ModeID)
	}
	if err := s.setMode(p.ModeID); err != nil {
		return nil, err
	}
	return &acp.SetSessionModeResponse{}, nil
}

func (c *conn) setConfigOption(_ context.Context, p *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	s, err := c.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.ConfigID == ConfigSandbox {
		if p.Value.Bool != nil {
			return nil, invalidParams("the sandbox option takes workspace-write, read-only or off")
		}
		if err := s.setSandboxMode(p.Value.ID); err != nil {
			return nil, err
		}
		return &acp.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
	}
	if p.ConfigID != ConfigMode {
		if err := s.setLoopOption(p.ConfigID, p.Value.ID, p.Value.Bool != nil); err != nil {
			return nil, err
		}
		return &acp.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
	}
	if p.Value.Bool != nil || !policy.Mode(p.Value.ID).Valid() {
		return nil, invalidParams("unknown value for the mode option")
	}
	if err := s.setMode(p.Value.ID); err != nil {
		return nil, err
	}
	return &acp.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}

// detach removes a session from the connection and the agent.
func (c *conn) detach(s *session) {
	c.mu.Lock()
	delete(c.sessions, s.id)
	c.mu.Unlock()
	a := c.agent
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
}

func (c *conn) closeSession(_ context.Context, p *acp.CloseSessionRequest) (acp.Reply[acp.CloseSessionResponse], error) {
	s, err := c.session(p.SessionID)
	if err != nil {
		return acp.Reply[acp.CloseSessionResponse]{}, err
	}
	// Cancel at once, in arrival order, like session/cancel; wait and free
	// off the read goroutine.
	s.cancelTurn()
	return acp.Later(func() (*acp.CloseSessionResponse, error) {
		s.close()
		c.detach(s)
		return &acp.CloseSessionResponse{}, nil
	}), nil
}

func (c *conn) deleteSession(_ context.Context, p *acp.DeleteSessionRequest) (acp.Reply[acp.DeleteSessionResponse], error) {
	a := c.agent
	if a.store == nil {
		return acp.Reply[acp.DeleteSessionResponse]{}, acp.NewError(acp.CodeMethodNotFound, "session/delete is not supported without a state directory")
	}
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	a.mu.Unlock()
	if s != nil {
		s.cancelTurn()
	}
	return acp.Later(func() (*acp.DeleteSessionResponse, error) {
		if s != nil {
			s.close()
			s.conn.detach(s)
		}
		if err := sessionlog.Delete(a.store.dir, p.SessionID); err != nil && !errors.Is(err, sessionlog.ErrNotFound) && !errors.Is(err, sessionlog.ErrInvalidID) {
			return nil, fmt.Errorf("%w: deleting session: %v", acp.ErrInternal, err)
		}
		return &acp.DeleteSessionResponse{}, nil
	}), nil
}

// closeAll ends every session of a closed connection.
func (c *conn) closeAll() {
	c.mu.Lock()
	all := slices.Collect(maps.Values(c.sessions))
	c.mu.Unlock()
	for _, s := range all {
		s.cancelTurn()
	}
	for _, s := range all {
		s.close()
		c.detach(s)
	}
}

func (c *conn) listSessions(_ context.Context, p *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	a := c.agent
	if a.store == nil {
		return nil, acp.NewError(acp.CodeMethodNotFound, "session/list is not supported without a state directory")
	}
	var cwd, cursor string
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	// Only conversations: not the caller's own fresh session, nor sessions
	// created and abandoned before their first prompt.
	page, err := sessionlog.ListPrompted(a.store.dir, cwd, cursor, 0)
	if errors.Is(err, sessionlog.ErrBadCursor) {
		return nil, invalidParams("invalid cursor")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: listing sessions: %v", acp.ErrInternal, err)
	}
	resp := &acp.ListSessionsResponse{Sessions: make([]acp.SessionInfo, 0, len(page.Sessions))}
	for _, st := range page.Sessions {
		info := acp.SessionInfo{SessionID: st.SessionID, Cwd: st.Cwd, AdditionalDirectories: st.AdditionalDirectories}
		title := st.Title
		if title == "" && st.FirstPrompt != nil {
			// Not named yet (its first turn never finished): the first
			// prompt's gist, as the title will be.
			var blocks []acp.ContentBlock
			if json.Unmarshal(st.FirstPrompt, &blocks) == nil {
				title = titleFrom(blocks)
			}
		}
		if title != "" {
			info.Title = acp.Ptr(title)
		}
		if !st.UpdatedAt.IsZero() {
			info.UpdatedAt = acp.Ptr(st.UpdatedAt.UTC().Format(time.RFC3339))
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	if page.NextCursor != "" {
		resp.NextCursor = acp.Ptr(page.NextCursor)
	}
	return resp, nil
}
