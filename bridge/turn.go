package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Turn is one prompt turn of a session, handed to [Loop.Turn]; its methods
// are the loop's whole view of the bridge. They are safe for concurrent use
// (a loop may run several tool calls at once). After Loop.Turn has returned
// they do nothing: Execute returns a CANCELLED result and emitted updates
// are dropped.
//
// The Turn is the turn's single writer: every update of the turn goes
// through it, and once the prompt is answered it drops everything, so no
// update of a turn ever follows its response. Emitters (Text, Message,
// Thought, Plan, Usage) never fail: when the connection is gone the turn's
// context is cancelled and the update is dropped.
type Turn struct {
	sess    *session
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the prompt has been answered
	prompt  []acp.ContentBlock
	typed   []acp.ContentBlock // the prompt as sent, when a command expanded it
	history []json.RawMessage

	// running counts Execute calls in flight; the prompt is answered only
	// after all of them returned.
	running sync.WaitGroup

	mu       sync.Mutex
	posted   uint64                    // the outbox number of the turn's last post
	finished bool                      // the response is being sent: drop updates
	draining bool                      // the loop returned: no new Execute calls
	msgID    string                    // current agent message id; "" starts a new one
	thinkID  string                    // current thought's message id; "" starts a new one
	open     map[string]*openCall      // announced, not yet completed or failed
	started  map[pipeline.Token]string // running calls' tokens → their call ids

	// A structured turn (see structured.go): the schema the client asked
	// for, and the validated value or the failure the loop reported.
	outputSchema json.RawMessage
	structured   structuredOutcome
}

// openCall is a tool call the editor has seen and that has not reached
// completed or failed yet.
type openCall struct {
	id             string
	kind           presentation.ToolCallKind
	terminal       bool // announced with _meta.terminal_info (tier 2)
	streamed       bool // terminal_output chunks were sent
	editorTerminal string
	titlePrefix    string
}

func newTurn(ctx context.Context, s *session, prompt []acp.ContentBlock, history []json.RawMessage) *Turn {
	ctx, cancel := context.WithCancel(ctx)
	return &Turn{sess: s, ctx: ctx, cancel: cancel, done: make(chan struct{}), prompt: prompt, history: history, open: map[string]*openCall{}}
}

// send writes one update of this turn, unless the turn has been answered.
// It is encoded before the lock is taken: concurrent calls encode theirs
// at the same time.
func (t *Turn) send(u acp.SessionUpdateVariant) bool {
	o := t.sess.outgoing(u, true, nil)
	t.mu.Lock()
	defer t.unlock()
	return t.postLocked(o)
}

// sendLocked posts u with t.mu held; t.unlock writes it.
func (t *Turn) sendLocked(u acp.SessionUpdateVariant) bool {
	if t.finished {
		return false
	}
	return t.postLocked(t.sess.outgoing(u, true, nil))
}

// postLocked posts o to the session's outbox with t.mu held, which orders
// the turn's updates. Once the turn has been answered only o's records
// are posted (nothing of a turn follows its response); the result says
// whether the turn still takes updates.
func (t *Turn) postLocked(o outgoing) bool {
	if t.finished {
		o.update = nil
	}
	if o.update != nil || len(o.records) > 0 {
		t.posted = t.sess.out.post(o)
	}
	return !t.finished
}

// unlock releases t.mu, then waits until everything posted under it was
// written: updates are queued in order under the lock and written outside
// it, so that concurrent calls share the log's writes (see outbox).
func (t *Turn) unlock() {
	seq := t.posted
	t.mu.Unlock()
	t.sess.out.flushThrough(seq)
}

func (t *Turn) nextMessageID() *string {
	t.thinkID = ""
	if t.msgID == "" {
		t.msgID = t.sess.newMessageID()
	}
	id := t.msgID
	return &id
}

func (t *Turn) message(blocks []acp.ContentBlock) {
	t.mu.Lock()
	defer t.unlock()
	for _, b := range blocks {
		if !t.sendLocked(&acp.AgentMessageChunk{Content: b, MessageID: t.nextMessageID()}) {
			return
		}
	}
}

func (t *Turn) thought(text string) {
	t.mu.Lock()
	defer t.unlock()
	// Consecutive thought chunks form one thought; a message chunk or a
	// tool call in between starts a new one.
	t.msgID = ""
	if t.thinkID == "" {
		t.thinkID = t.sess.newMessageID()
	}
	id := t.thinkID
	t.sendLocked(&acp.AgentThoughtChunk{Content: acp.Text(text), MessageID: &id})
}

func (t *Turn) newMessage() {
	t.mu.Lock()
	t.msgID, t.thinkID = "", ""
	t.mu.Unlock()
}

func (t *Turn) plan(entries []acp.PlanEntry) {
	t.send(&acp.Plan{Entries: entries})
}

func (t *Turn) usage(used, size uint64, cost *acp.Cost) {
	t.send(&acp.UsageUpdate{Used: used, Size: size, Cost: cost})
}

func (t *Turn) remember(record json.RawMessage) error {
	if !json.Valid(record) {
		return fmt.Errorf("bridge: Remember: record is not valid JSON")
	}
	return t.sess.remember(record)
}

// execute is [Turn.Execute].
func (t *Turn) execute(ctx context.Context, call ToolCall) registry.Result {
	t.mu.Lock()
	if t.draining {
		t.mu.Unlock()
		return registry.ErrorResult(registry.CodeCancelled, "the turn has ended")
	}
	t.running.Add(1)
	t.mu.Unlock()
	defer t.running.Done()
	// The call ends with the turn even if the loop passed a context of
	// its own.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(t.ctx, cancel)()
	s := t.sess

	scope := s.id
	if strings.HasPrefix(call.Scope, s.id+"/") {
		scope = call.Scope
	}
	id := s.claimCallID(call.ID)
	def, _ := s.agent.registry.Lookup(scope, call.Name)
	h := &turnHost{turn: t, sess: s}
	// The presenter sees the host too, so it can make paths absolute
	// against the session's cwd (a card's locations must be absolute).
	pc := presentCall{name: call.Name, id: id, args: call.Arguments, scope: scope, host: h}
	view := s.callView(def, pc)
	// The prefix is part of the title everywhere the call is shown (the
	// card, the permission request).
	view.Title = call.TitlePrefix + view.Title

	kind := acp.ToolKindOther
	if view.Kind != "" {
		kind = acp.ToolKind(view.Kind)
	}
	oc := &openCall{id: id, kind: view.Kind, titlePrefix: call.TitlePrefix}
	tc := &acp.ToolCall{
		ToolCallID: id,
		Title:      relTitle(s.cwd, view.Title),
		Kind:       kind,
		Status:     acp.ToolCallPending,
		Content:    s.conn.features.mapContent(view.Content),
		Locations:  s.locations(view.Locations),
		RawInput:   rawInput(call.Arguments),
	}
	meta := map[string]any{}
	if view.Kind == presentation.KindExecute && s.conn.features.tier2() {
		// Tier 2: announce the display terminal on the tool_call itself, so
		// the client knows the id before any output chunk names it.
		oc.terminal = true
		tc.Content = []acp.ToolCallContent{acp.Terminal(id)}
		meta["terminal_info"] = map[string]any{"terminal_id": id, "cwd": s.cwd}
	}
	if def != nil && def.Subjects != nil {
		// A command's card says what sandbox it runs in.
		if subjects := safeSubjects(def, pc); hasCommand(subjects) {
			sb, _ := s.sandboxMeta(subjects)
			meta[MetaKey] = map[string]any{"sandbox": sb}
		}
	}
	if len(meta) > 0 {
		tc.Meta = metaJSON(meta)
	}

	announce := s.outgoing(tc, true, nil)
	t.mu.Lock()
	t.msgID, t.thinkID = "", ""
	t.open[id] = oc
	t.postLocked(announce)
	t.unlock()

	out := s.agent.pipeline.Execute(ctx, pipeline.Input{
		Tool:      call.Name,
		Arguments: call.Arguments,
		CallID:    id,
		Parent:    call.Parent,
		Scope:     scope,
		Host:      h,
		Approver:  &approver{turn: t, call: oc, view: view},
		OnStart: func(exec *pipeline.Execution) {
			t.startedCall(exec.Token(), id)
			st := acp.ToolCallInProgress
			t.send(&acp.ToolCallUpdate{ToolCallID: id, Status: &st})
		},
	})
	res := out.Result
	if out.Execution != nil {
		defer t.endedCall(out.Execution.Token())
	}
	records := s.toolRecords(out.Execution, call, id, t.callIDOf(call.Parent), out)

	var card presentation.Card
	// The tool's presenter sees every result its body produced, failures
	// included (a command that exited 2 still has its terminal card);
	// pipeline failures (unknown tool, invalid arguments, denials) show
	// their message.
	if def != nil && def.PresentResult != nil && out.Execution != nil && out.Dispatched {
		if v := safePresentResult(def, out.Execution, res); v != nil {
			card = v.Card
		}
	}
	if card == nil && res.View != nil {
		card = res.View.Card
	}
	var denied *pipeline.DeniedError
	if card == nil && errors.As(out.Err, &denied) {
		// The model reads which stage and listener refused; the person
		// reads why.
		card = &presentation.GenericCard{Content: []presentation.Content{presentation.Text(deniedText(denied))}}
	}
	if card == nil {
		card = &presentation.GenericCard{Content: res.Content}
	}
	t.finish(oc, card, res, out.JSON, records)
	if out.Dispatched && !res.IsError {
		s.attachNested(out.Execution, &res)
	}
	return res
}

// finish sends the final update of a call: completed or failed, the mapped
// result card and rawOutput.
//
// The call's tool records are logged with the update's record, in one
// write; when no update goes out (a cancellation failed the call first, or
// the turn has finished), they are logged alone. The update is made and
// encoded outside t.mu, and posted only if the call is still open then.
func (t *Turn) finish(oc *openCall, card presentation.Card, res registry.Result, raw json.RawMessage, records []sessionlog.Entry) {
	if len(raw) == 0 {
		raw = rawOutput(res)
	}
	s := t.sess
	t.mu.Lock()
	if _, ok := t.open[oc.id]; !ok || t.finished {
		// Already failed by a cancellation, or the turn has finished.
		delete(t.open, oc.id)
		t.postLocked(outgoing{records: records})
		t.unlock()
		return
	}
	t.mu.Unlock()
	st := acp.ToolCallCompleted
	if res.IsError {
		st = acp.ToolCallFailed
	}
	m := s.conn.features.mapCard(s.cwd, oc, card)
	var pre outgoing
	if m.preChunk != nil {
		// Tier 2 with nothing streamed: show the captured output in the
		// announced display terminal before it exits (the records were
		// made before it).
		pre = s.outgoing(&acp.ToolCallUpdate{ToolCallID: oc.id, Meta: m.preChunk}, true, records)
		records = nil
	}
	u := &acp.ToolCallUpdate{
		ToolCallID: oc.id,
		Status:     &st,
		Content:    m.content,
		Locations:  m.locations,
		RawOutput:  raw,
		Meta:       m.meta,
	}
	if u.Content == nil {
		u.Content = []acp.ToolCallContent{}
	}
	if m.title != "" {
		title := oc.titlePrefix + m.title
		u.Title = &title
	}
	final := s.outgoing(u, true, records)
	t.mu.Lock()
	defer t.unlock()
	if _, ok := t.open[oc.id]; !ok {
		// Failed by a cancellation meanwhile.
		t.postLocked(outgoing{records: append(pre.records, final.records...)})
		return
	}
	delete(t.open, oc.id)
	if m.preChunk != nil {
		t.postLocked(pre)
	}
	t.postLocked(final)
}

// failOpen marks every call the editor saw and that is still open failed:
// every tool call reaches completed or failed before the prompt is answered.
func (t *Turn) failOpen(reason string) {
	t.mu.Lock()
	defer t.unlock()
	for id, oc := range t.open {
		st := acp.ToolCallFailed
		u := &acp.ToolCallUpdate{
			ToolCallID: id,
			Status:     &st,
			Content:    []acp.ToolCallContent{acp.ToolText(reason)},
		}
		if oc.terminal {
			u.Meta = terminalExit(id, nil, "")
		}
		t.sendLocked(u)
		delete(t.open, id)
	}
}

// drain refuses new tool calls; the calls in flight finish.
func (t *Turn) drain() {
	t.mu.Lock()
	t.draining = true
	t.mu.Unlock()
	t.running.Wait()
}

// end stops the turn's updates; whatever is emitted afterwards is dropped.
func (t *Turn) end() {
	t.mu.Lock()
	t.finished = true
	t.unlock() // what was posted before is written before the response
}

// outputChunk streams live output of a tier-2 display terminal.
func (t *Turn) outputChunk(callID string, data []byte) {
	t.mu.Lock()
	defer t.unlock()
	oc := t.open[callID]
	if oc == nil || !oc.terminal {
		return
	}
	oc.streamed = true
	t.sendLocked(&acp.ToolCallUpdate{
		ToolCallID: callID,
		Meta:       metaJSON(map[string]any{"terminal_output": map[string]any{"terminal_id": callID, "data": string(data)}}),
	})
}

// embedTerminal shows an editor terminal (tier 1) in the call's card.
func (t *Turn) embedTerminal(callID, terminalID string) {
	t.mu.Lock()
	defer t.unlock()
	oc := t.open[callID]
	if oc == nil {
		return
	}
	oc.editorTerminal = terminalID
	t.sendLocked(&acp.ToolCallUpdate{ToolCallID: callID, Content: []acp.ToolCallContent{acp.Terminal(terminalID)}})
}

// presentCall is the registry.Call a presenter sees before the pipeline has
// materialised the execution.
type presentCall struct {
	name, id, scope string
	args            json.RawMessage
	host            *turnHost
}

func (c presentCall) ToolName() string           { return c.name }
func (c presentCall) CallID() string             { return c.id }
func (c presentCall) Arguments() json.RawMessage { return c.args }
func (c presentCall) Scope() string              { return c.scope }
func (c presentCall) Host() host.Host            { return c.host }

// callView asks the tool how to show its call; a tool without a presenter,
// an unknown tool or a presenter that panics gets its name as the title.
func (s *session) callView(def *registry.Definition, c presentCall) (view presentation.CallView) {
	view = presentation.CallView{Title: c.name, Kind: presentation.KindOther}
	if def == nil {
		return view
	}
	if def.Title != "" {
		view.Title = def.Title
	}
	if def.Kind != "" {
		view.Kind = def.Kind
	}
	if def.PresentCall == nil || !json.Valid(c.args) {
		return view
	}
	defer func() {
		if r := recover(); r != nil {
			s.agent.log.Warn("PresentCall panicked", "tool", c.name, "panic", r)
			view = presentation.CallView{Title: c.name, Kind: def.Kind}
		}
	}()
	v := def.PresentCall(c)
	if v.Title == "" {
		v.Title = view.Title
	}
	if v.Kind == "" {
		v.Kind = view.Kind
	}
	return v
}

func safePresentResult(def *registry.Definition, call registry.Call, res registry.Result) (v *presentation.ResultView) {
	defer func() {
		if r := recover(); r != nil {
			slog.Warn("PresentResult panicked", "tool", def.Name, "panic", r)
			v = nil
		}
	}()
	return def.PresentResult(call, res)
}

// rawInput is the call's arguments as JSON; arguments that are not valid
// JSON are shown as a JSON string so the editor still sees them.
func rawInput(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

func rawOutput(res registry.Result) json.RawMessage {
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// safeSubjects is the call's subjects; a hook that panics yields none.
func safeSubjects(def *registry.Definition, c presentCall) (subjects []registry.Subject) {
	defer func() {
		if recover() != nil {
			subjects = nil
		}
	}()
	return def.Subjects(c)
}

func metaJSON(v any) acp.Meta {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of strings and numbers
	}
	return b
}

// claimCallID returns id, or a suffixed variant when the session already
// used it: each tool call is announced exactly once.
func (s *session) claimCallID(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		id = "call"
	}
	cand := id
	for n := 2; ; n++ {
		if _, dup := s.callIDs[cand]; !dup {
			s.callIDs[cand] = struct{}{}
			return cand
		}
		cand = id + "#" + strconv.Itoa(n)
	}
}

// deniedText is a refusal as a card shows it to the person: the reason's
// first sentence (the rest, if any, instructs the model), without the
// pipeline's stage and listener names.
func deniedText(e *pipeline.DeniedError) string {
	reason, _, _ := strings.Cut(e.Reason, ". ")
	reason = strings.TrimSuffix(strings.TrimSpace(reason), ".")
	// The pipeline's own texts say "approval"; the person saw a
	// permission request.
	reason = strings.ReplaceAll(reason, "approval request", "permission request")
	if reason == "" {
		return "Not run: it was not allowed."
	}
	return "Not run: " + reason + "."
}
