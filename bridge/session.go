package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
)

// session is one active ACP session of a connection.
type session struct {
	agent *Agent
	conn  *conn
	id    string
	cwd   string
	roots []string // cwd first, then the additional directories
	// resolvedRoots is where roots resolve, walked once and checked at
	// each landing.
	resolvedRoots policy.ResolvedRoots
	extra         []string // additional directories as the client sent them
	created       time.Time

	log *logWriter // nil without a state directory
	mcp io.Closer  // the session's MCP connections, if any
	// sandboxServers start the session's sandboxed commands.
	sandboxServers sandbox.Servers

	mu   sync.Mutex
	mode policy.Mode
	// sandboxMode is the session's choice of sandbox mode ("" follows
	// the settings).
	sandboxMode sandbox.Mode
	title       string
	updatedAt   time.Time
	history     []json.RawMessage
	remembered  policy.RuleSet // allow_always / reject_always grants
	callIDs     map[string]struct{}
	nextMsg     int
	// compactions counts the session's compactions, for their ids.
	compactions int
	turn        *Turn // the running turn, nil when idle
	closed      bool
	// sessionTools names the session's tools from Options.SessionTools in
	// the registry.
	sessionTools []string
	// mcpTools names the session's MCP tools in the registry. A list that
	// changes before attach registered the first one waits in mcpPending.
	mcpTools    []string
	mcpAttached bool
	mcpPending  *[]*registry.Definition
	undo        undoState // file changes and undos (see undo.go)
	// project is the session's share of Options.Instructions, nil
	// without; set before the session is attached.
	project *sessionProject
	// announced, set for a session made by session/new, is closed once its
	// first updates (the slash commands) are sent or skipped.
	announced chan struct{}

	// out orders the session's updates and records (see outbox.go); wmu
	// serialises its writes with a replay, so that the log records updates
	// in the order they were sent.
	out        *outbox
	outRecords []sessionlog.Entry // a batch's records, reused by writeOut
	wmu        sync.Mutex
}

// errBusy refuses a prompt while the session's previous turn still runs:
// ACP v1 defines no concurrent prompts on one session, and interleaving two
// turns' updates would corrupt both.
var errBusy = acp.NewError(acp.CodeInvalidRequest, "session is busy: a prompt turn is still running; cancel it or wait for its response")

func newSession(a *Agent, c *conn, id, cwd string, extra []string, created time.Time) *session {
	s := &session{
		agent:   a,
		conn:    c,
		id:      id,
		cwd:     cwd,
		extra:   slices.Clone(extra),
		roots:   append([]string{cwd}, extra...),
		created: created,
		mode:    *a.mode.Load(),
		callIDs: map[string]struct{}{},
	}
	s.remembered.Cwd = cwd
	s.out = newOutbox(s.writeOut)
	return s
}

func (s *session) info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionInfo{ID: s.id, Cwd: s.cwd, Roots: slices.Clone(s.roots), Mode: s.mode, Title: s.title}
}

func (s *session) currentMode() policy.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

func (s *session) toolSchemas() []registry.ToolSchema { return s.agent.registry.Schemas(s.id) }

func (s *session) newMessageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg++
	return "m" + strconv.Itoa(s.nextMsg)
}

// sendUpdate writes a session/update and records it in the durable log.
// records, made just before the update (a call's tool records before its
// final update), are logged in the same write as the update's record.
func (s *session) sendUpdate(u acp.SessionUpdateVariant, records ...sessionlog.Entry) {
	s.send(u, true, records...)
}

// send writes a session/update, and records it in the durable log when
// logged is set, after records, in one write. The update is encoded once;
// the log and the wire get the same bytes.
func (s *session) send(u acp.SessionUpdateVariant, logged bool, records ...sessionlog.Entry) {
	s.out.flushThrough(s.out.post(s.outgoing(u, logged, records)))
}

// outgoing encodes u for the outbox; an update that does not encode is
// dropped (its records are still logged).
func (s *session) outgoing(u acp.SessionUpdateVariant, logged bool, records []sessionlog.Entry) outgoing {
	raw, err := acp.SessionUpdate{Value: u}.MarshalJSON()
	if err != nil {
		s.agent.log.Error("encoding session/update", "session", s.id, "err", err)
		return outgoing{records: records}
	}
	return outgoing{update: raw, logged: logged, records: records}
}

func (s *session) remember(record json.RawMessage) error {
	s.mu.Lock()
	s.history = append(s.history, record)
	s.mu.Unlock()
	if s.log == nil {
		return nil
	}
	return s.log.append(logEvent{Kind: evHistory, Record: record})
}

// rememberRules records allow_always or reject_always grants in scope. A
// project or user grant goes to its file; when that fails, the grant is
// kept for the session, and the returned notice says so.
func (s *session) rememberRules(scope policy.Scope, d policy.Decision, rules []policy.Rule) (notice string) {
	if scope != policy.ScopeSession {
		note, err := s.agent.opts.Grants.Add(s.cwd, scope, d, rules...)
		if note.Damaged != nil {
			notice = fmt.Sprintf("⚠ The remembered permissions file was damaged (%v); it is kept as %s and a fresh file was started.", note.Damaged, note.KeptAs)
		}
		if err == nil {
			return notice
		}
		s.agent.log.Error("remembering a permission answer", "session", s.id, "scope", scope, "err", err)
		notice = strings.TrimSpace(notice + fmt.Sprintf("\n⚠ This answer could not be remembered %s (%v); it is remembered in this session only.", scope.Phrase(), err))
	}
	s.rememberSession(d, rules)
	return notice
}

// rememberSession records grants for the session (and its log).
func (s *session) rememberSession(d policy.Decision, rules []policy.Rule) {
	s.mu.Lock()
	for _, r := range rules {
		s.remembered.Add(d, r)
	}
	s.mu.Unlock()
	if s.log != nil {
		for _, r := range rules {
			s.log.append(logEvent{Kind: evRule, Decision: d.String(), Rule: r.String()})
		}
	}
}

// grants lists the remembered grants: the session's (allow rules first),
// then the project's and the user's, and the problems of grants files that
// cannot be read.
func (s *session) grants() ([]grant, []error) {
	s.mu.Lock()
	var out []grant
	for _, r := range s.remembered.Allow {
		out = append(out, grant{policy.ScopeSession, policy.Allow, r})
	}
	for _, r := range s.remembered.Deny {
		out = append(out, grant{policy.ScopeSession, policy.Deny, r})
	}
	s.mu.Unlock()
	if s.agent.opts.Grants == nil {
		return out, nil
	}
	stored, errs := s.agent.opts.Grants.Grants(s.cwd)
	for _, g := range stored {
		out = append(out, grant{g.Scope, g.Decision, g.Rule})
	}
	return out, errs
}

// grant is one remembered rule and its scope.
type grant struct {
	scope    policy.Scope
	decision policy.Decision
	rule     policy.Rule
}

// revoke forgets a grant where it is kept.
func (s *session) revoke(g grant) error {
	if g.scope != policy.ScopeSession {
		_, err := s.agent.opts.Grants.Remove(s.cwd, grants.Grant{Scope: g.scope, Decision: g.decision, Rule: g.rule})
		return err
	}
	s.mu.Lock()
	rs := &s.remembered
	list := &rs.Allow
	if g.decision == policy.Deny {
		list = &rs.Deny
	}
	*list = slices.DeleteFunc(*list, func(r policy.Rule) bool { return r == g.rule })
	s.mu.Unlock()
	if s.log != nil {
		s.log.append(logEvent{Kind: evRevoke, Decision: g.decision.String(), Rule: g.rule.String()})
	}
	return nil
}

// verdict evaluates the configured rules and the session's grants for a
// call, deny > ask > allow.
func (s *session) verdict(exec *pipeline.Execution) policy.Verdict {
	rs := s.agent.Rules()
	rs.Cwd = s.cwd
	s.mu.Lock()
	mine := s.remembered
	s.mu.Unlock()
	stored := s.storedRules(exec)
	subjects := exec.Subjects()
	// Paths are judged where they land too: a symlink must neither slip
	// past a deny rule nor stretch an allow rule (a remembered one above
	// all: "always allow edits in src/") to wherever it points.
	l := s.landing(exec, subjects)
	tool := exec.ToolName()
	// Deny beats ask beats allow across all of them: a remembered allow
	// never widens a configured or remembered deny.
	v := policy.Strictest(rs.EvaluateLanded(tool, subjects, l), mine.EvaluateLanded(tool, subjects, l), stored.EvaluateLanded(tool, subjects, l))
	if changesFiles(exec.Kind(), subjects) {
		// File changes are also judged as a class, so a grant remembered
		// for a write covers an edit of the same file (and a deny of
		// either kind still beats an allow of either kind).
		c := policy.ClassEdits
		v = policy.Strictest(v, rs.EvaluateLanded(c, subjects, l), mine.EvaluateLanded(c, subjects, l), stored.EvaluateLanded(c, subjects, l))
	}
	return v
}

// storedRules are the project's and user's remembered answers for a call.
// The deny, roots and rules listeners each ask for the verdict; they are
// read once per call (from the grants' cache, see [grants.Recheck]) and
// kept in the call's host, like its landing, so that one call's listeners
// judge it by the same answers.
func (s *session) storedRules(exec *pipeline.Execution) policy.RuleSet {
	read := func() policy.RuleSet { return s.agent.storedRules(s.cwd) }
	if h := s.callHost(exec); h != nil {
		return h.storedRules(read)
	}
	return read()
}

// changesFiles reports whether a call belongs to [policy.ClassEdits]: its
// kind changes files (edit, delete, move) and every subject is a path it
// writes. A call that also runs a command or reads elsewhere is judged by
// its tool's name only, so a file-change grant never stretches to it.
func changesFiles(kind presentation.ToolCallKind, subjects []registry.Subject) bool {
	if !policy.ChangesFiles(kind) || len(subjects) == 0 {
		return false
	}
	for _, subj := range subjects {
		if subj.Kind != registry.SubjectPath || !subj.Writes {
			return false
		}
	}
	return true
}

// ruleName is the name an "always" answer remembers a call under: the
// file-change class for file changes, else the tool's name.
func ruleName(exec *pipeline.Execution) string {
	if changesFiles(exec.Kind(), exec.Subjects()) {
		return policy.ClassEdits
	}
	return exec.ToolName()
}

// landing is where a call's paths land, computed once per call: the deny,
// roots and rules listeners each ask for the verdict, and landing costs
// lstat calls. It is kept in the call's host (the turnHost the bridge made
// for it), where the landing guard checks it again and the tool finds it;
// only the rules are evaluated again, so a rule remembered meanwhile still
// counts. A call without a turnHost of this session (an embedder running
// the pipeline itself) is landed afresh each time.
func (s *session) landing(exec *pipeline.Execution, subjects []registry.Subject) policy.Landing {
	land := func() policy.Landing { return s.land(subjects) }
	if h := s.callHost(exec); h != nil {
		return h.judged(land)
	}
	return land()
}

// land lands subjects in the session's roots (see [policy.LandIn]).
func (s *session) land(subjects []registry.Subject) policy.Landing {
	return s.resolvedRoots.LandIn(s.roots, subjects)
}

// callHost returns the turnHost of exec when it is one of this session's
// calls.
func (s *session) callHost(exec *pipeline.Execution) *turnHost {
	th, ok := exec.Host().(*turnHost)
	if !ok || th.sess != s {
		return nil
	}
	return th
}

// setMode switches the session mode, tells the editor through both APIs
// (current_mode_update and config_option_update, whichever the change came
// through, so both stay in sync) and logs the change. The updates go out
// before the response of set_mode/set_config_option.
func (s *session) setMode(id string) error {
	mode := policy.Mode(id)
	if !mode.Valid() {
		return fmt.Errorf("%w: unknown mode %q", acp.ErrInvalidParams, id)
	}
	s.mu.Lock()
	changed := s.mode != mode
	s.mode = mode
	s.mu.Unlock()
	if !changed {
		return nil
	}
	if s.log != nil {
		s.log.append(logEvent{Kind: evMode, Mode: id})
	}
	s.sendUpdate(&acp.CurrentModeUpdate{CurrentModeID: id})
	s.sendUpdate(&acp.ConfigOptionUpdate{ConfigOptions: s.configOptions()})
	return nil
}

// startTurn registers a turn, or fails when one is running.
func (s *session) startTurn(ctx context.Context, prompt []acp.ContentBlock) (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, acp.NewError(acp.CodeInvalidParams, "session is closed")
	}
	if s.turn != nil {
		return nil, errBusy
	}
	t := newTurn(ctx, s, prompt, slices.Clone(s.history))
	s.turn = t
	return t, nil
}

// cancelTurn cancels the running turn, if any.
func (s *session) cancelTurn() {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}

// runTurn runs a registered turn to its end and returns the prompt's
// response. It is the turn's single exit: it waits for the loop and every
// tool call, fails the calls still open, flushes the log, and stops the
// turn's updates before the response goes out.
func (s *session) runTurn(t *Turn) (acp.PromptResponse, error) {
	defer func() {
		s.mu.Lock()
		s.turn = nil
		s.updatedAt = s.agent.opts.Now()
		s.mu.Unlock()
		t.cancel()
		close(t.done)
	}()
	s.mu.Lock()
	s.undo.turn++
	s.mu.Unlock()
	if s.log != nil {
		s.log.append(logEvent{Kind: evPrompt, Prompt: t.prompt})
	}
	stop, err := s.dispatchPrompt(t)
	t.drain()
	cancelled := t.ctx.Err() != nil
	if cancelled {
		t.failOpen("Cancelled.")
		stop, err = acp.StopCancelled, nil
	} else {
		t.failOpen("The turn ended before the call completed.")
	}
	if err == nil && !cancelled {
		s.maybeTitle(t)
	}
	t.end()
	if s.log != nil {
		s.log.append(logEvent{Kind: evTurnEnd, StopReason: string(stop)})
		if serr := s.log.sync(); serr != nil {
			s.agent.log.Error("session log sync failed", "session", s.id, "err", serr)
		}
	}
	if err != nil {
		return acp.PromptResponse{}, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	if !validStop(stop) {
		stop = acp.StopEndTurn
	}
	return acp.PromptResponse{StopReason: stop, Meta: t.structuredMeta(stop)}, nil
}

// dispatchPrompt runs a slash command of the bridge or else the loop. A
// panicking loop fails the prompt instead of the daemon.
func (s *session) dispatchPrompt(t *Turn) (stop acp.StopReason, err error) {
	if handled, stop := s.slashCommand(t); handled {
		return stop, nil
	}
	defer func() {
		if r := recover(); r != nil {
			s.agent.log.Error("loop panicked", "session", s.id, "panic", r)
			stop, err = "", fmt.Errorf("the agent loop failed: %v", r)
		}
	}()
	if s.agent.opts.Loop == nil {
		return "", errors.New("no agent loop is configured")
	}
	if note := s.takeUndoNote(); note != "" {
		// The model learns what /undo reverted before it reads the
		// prompt; the person's prompt (log, replay, title) stays theirs.
		if t.typed == nil {
			t.typed = t.prompt
		}
		t.prompt = append([]acp.ContentBlock{acp.Text(note)}, t.prompt...)
	}
	return s.agent.opts.Loop.Turn(t.ctx, t)
}

func validStop(r acp.StopReason) bool {
	switch r {
	case acp.StopEndTurn, acp.StopMaxTokens, acp.StopMaxTurnRequests, acp.StopRefusal, acp.StopCancelled:
		return true
	}
	return false
}

// maybeTitle names the session after its first exchange.
func (s *session) maybeTitle(t *Turn) {
	s.mu.Lock()
	if s.title != "" {
		s.mu.Unlock()
		return
	}
	prompt := t.prompt
	if t.typed != nil {
		prompt = t.typed // the command the user typed, not its expansion
	}
	title := titleFrom(prompt)
	if title == "" {
		s.mu.Unlock()
		return
	}
	s.title = title
	now := s.agent.opts.Now().UTC().Format(time.RFC3339)
	s.mu.Unlock()
	if s.log != nil {
		s.log.append(logEvent{Kind: evTitle, Title: title})
	}
	t.send(&acp.SessionInfoUpdate{Title: acp.Some(title), UpdatedAt: acp.Some(now)})
}

// titleFrom derives a title from the first line of a prompt's text.
func titleFrom(prompt []acp.ContentBlock) string {
	for _, b := range prompt {
		tc, ok := b.Value.(*acp.TextContent)
		if !ok {
			continue
		}
		text := tc.Text
		for i, r := range text {
			if r == '\n' {
				text = text[:i]
				break
			}
		}
		text = trimSpace(text)
		if text == "" {
			continue
		}
		const max = 80
		if r := []rune(text); len(r) > max {
			text = string(r[:max-1]) + "…"
		}
		return text
	}
	return ""
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// close cancels the running turn, waits for it to end and frees the
// session's resources.
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	t, mcp := s.turn, s.mcp
	s.mu.Unlock()
	if t != nil {
		t.cancel()
		<-t.done
	}
	s.agent.registry.RemoveScope(s.id)
	s.agent.pipeline.RemoveScope(s.id)
	s.sandboxServers.Close() // each ends after its last command
	s.closeProject()
	if f := s.agent.opts.OnSessionClose; f != nil {
		f(s.info())
	}
	if mcp != nil {
		if err := mcp.Close(); err != nil {
			s.agent.log.Warn("closing MCP servers", "session", s.id, "err", err)
		}
	}
	if s.log != nil {
		if err := s.log.close(); err != nil {
			s.agent.log.Error("closing session log", "session", s.id, "err", err)
		}
	}
}

// mcpToolsChanged swaps the session's MCP tools for the connector's new
// list (see [MCPConnector]). A closed session ignores it: its scope is
// gone and must stay gone.
func (s *session) mcpToolsChanged(tools []*registry.Definition, failures []error) {
	log := s.agent.log
	for _, f := range failures {
		log.Warn("MCP tools changed", "session", s.id, "err", f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !s.mcpAttached {
		s.mcpPending = &tools
		return
	}
	if err := s.agent.registry.SwapScoped(s.id, s.mcpTools, tools...); err != nil {
		log.Warn("MCP tools changed; keeping the previous ones", "session", s.id, "err", err)
		return
	}
	s.mcpTools = toolNames(tools)
	log.Info("MCP tools changed", "session", s.id, "tools", s.mcpTools)
}

// refreshSessionTools swaps the session's session tools for what
// Options.SessionTools returns now (see [Agent.RefreshSessionTools]). A
// closed session ignores it: its scope is gone and must stay gone.
func (s *session) refreshSessionTools() error {
	a := s.agent
	if a.opts.SessionTools == nil && s.project == nil {
		return nil
	}
	a.toolsMu.Lock()
	defer a.toolsMu.Unlock()
	var defs []*registry.Definition
	if a.opts.SessionTools != nil {
		defs = a.opts.SessionTools(s.info())
	}
	defs = append(defs, s.skillTools()...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(defs) == 0 && len(s.sessionTools) == 0 {
		return nil
	}
	if err := a.registry.SwapScoped(s.id, s.sessionTools, defs...); err != nil {
		return err
	}
	s.sessionTools = toolNames(defs)
	return nil
}

func toolNames(defs []*registry.Definition) []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

// logRecords logs records made together, in one write.
func (s *session) logRecords(records []sessionlog.Entry) {
	if len(records) > 0 {
		s.out.flushThrough(s.out.post(outgoing{records: records}))
	}
}

// toolRecords are the log records of the frozen identity, arguments and
// normalised result of a call, made together after it ran (nil without a
// log). parentCall is the call id of the parent execution, the stable
// name of the parent (tokens are per-process identities).
func (s *session) toolRecords(exec *pipeline.Execution, call ToolCall, id, parentCall string, out pipeline.Outcome) []sessionlog.Entry {
	if s.log == nil {
		return nil
	}
	ev := &toolEvent{CallID: id, Tool: call.Name, Arguments: rawInput(call.Arguments), ParentCall: parentCall}
	if exec != nil {
		if args := exec.Arguments(); args != nil {
			ev.Arguments = args
		}
		if p, ok := exec.Parent(); ok {
			ev.Parent = p.String()
		}
		ev.Token = exec.Token().String()
		ev.Kind = string(exec.Kind())
	}
	res := out.JSON
	if len(res) == 0 {
		res = rawOutput(out.Result)
	}
	return []sessionlog.Entry{
		{Kind: evToolCall, Payload: ev},
		{Kind: evToolResult, Payload: &toolEvent{CallID: id, Tool: call.Name, Result: res}},
	}
}
