package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// DefaultMaxTurnRequests caps the model requests of one prompt turn when
// [Options.MaxTurnRequests] is zero.
const DefaultMaxTurnRequests = 50

// Options configure a [Loop]. Provider is required.
type Options struct {
	// Provider streams the model's responses.
	Provider llm.Provider
	// Model is the model name sent with each request (empty: the
	// provider's default). Sessions may pick another one of Models.
	Model string
	// Models are the model names the editor may choose from (the `model`
	// config option). Model is offered even when it is not listed.
	Models []string
	// MaxTokens caps one response (0: the provider's default).
	MaxTokens int
	// MaxTurnRequests caps the model requests of one prompt turn; when the
	// cap is hit the turn ends with stopReason max_turn_requests (0:
	// [DefaultMaxTurnRequests]).
	MaxTurnRequests int
	// ContextWindow is the model's context size in tokens, reported in
	// usage_update and kept to by compaction. 0 finds it out: from the
	// model's server when the provider can ask it ([llm.WindowProber]),
	// from the catalog ([catalog.Lookup]), else [DefaultContextWindow].
	ContextWindow int
	// Pricing, optional, is the model's price; nil takes the catalog's.
	// Without a price usage_update carries no cost.
	Pricing *catalog.Pricing
	// NoAutoCompact turns automatic compaction off (see [CommandCompact]
	// for what it does); /compact and the retry after a context-overflow
	// error still compact.
	NoAutoCompact bool
	// Instructions, optional, are the deployment's instructions: the
	// system prompt's # Instructions section (see [System]).
	Instructions string
	// Project, optional, supplies what a session's repository tells the
	// agent (project instructions, skills); the loop calls it once per
	// turn and puts it at its fixed place in the system prompt (see
	// [System]). It must be safe for concurrent use.
	Project func(bridge.SessionInfo) Project
	// Images says the provider accepts images: prompt images are sent to
	// the model, and the loop advertises image prompts.
	Images bool
	// Registry, optional, is the registry the bridge runs tools from. The
	// loop reads tool kinds from it to run read-only calls of one response
	// concurrently; without it every call runs in order.
	Registry *registry.Registry
	// Logger receives diagnostics (default slog.Default()).
	Logger *slog.Logger
}

// Loop is the built-in agent loop: it implements [bridge.Loop] over an
// [llm.Provider]. One Loop serves every session of a daemon; it is safe for
// concurrent use, and [Loop.Update] swaps its settings live.
type Loop struct {
	opts atomic.Pointer[Options]

	mu      sync.Mutex
	models  map[string]string      // session id → model chosen in the editor
	costs   map[string]sessionCost // session id → its cost so far
	windows map[string]int         // model → its context window, once found
}

var _ bridge.Loop = (*Loop)(nil)

// New returns a Loop. It panics without a provider: that is a wiring bug.
func New(opts Options) *Loop {
	l := &Loop{models: map[string]string{}, costs: map[string]sessionCost{}, windows: map[string]int{}}
	l.Update(opts)
	return l
}

// Update replaces the loop's options; turns that start afterwards use them
// (a running turn keeps the options it started with). The registry and
// logger of the first options are kept when the new ones leave them nil.
func (l *Loop) Update(opts Options) {
	if opts.Provider == nil {
		panic("model: Options.Provider is nil")
	}
	if old := l.opts.Load(); old != nil {
		if opts.Registry == nil {
			opts.Registry = old.Registry
		}
		if opts.Logger == nil {
			opts.Logger = old.Logger
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxTurnRequests <= 0 {
		opts.MaxTurnRequests = DefaultMaxTurnRequests
	}
	if opts.ContextWindow < 0 {
		opts.ContextWindow = 0
	}
	opts.Models = slices.Clone(opts.Models)
	l.opts.Store(&opts)
}

// Options returns the options in force.
func (l *Loop) Options() Options { return *l.opts.Load() }

// PromptCapabilities says which prompt content the loop turns into model
// context beyond text and resource links; pass it as the bridge's
// [bridge.Options].Prompt.
func (l *Loop) PromptCapabilities() acp.PromptCapabilities {
	return acp.PromptCapabilities{Image: l.Options().Images, EmbeddedContext: true}
}

// Turn implements [bridge.Loop]: it sends the prompt with the session's
// history to the model, streams the reply, runs the tool calls the model
// asks for through the bridge and repeats until the model ends its turn,
// the request cap is hit or the editor cancels. A structured turn (the
// client sent an output schema, see [bridge.Turn.OutputSchema]) ends
// through a forced final tool instead (see [FinalToolName]).
func (l *Loop) Turn(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
	opts := l.Options()
	info := t.SessionInfo()
	r := &run{loop: l, opts: opts, t: t, sessionID: info.ID, scope: info.ID, maxRequests: opts.MaxTurnRequests}
	if schema := t.OutputSchema(); schema != nil {
		r.final = newFinalTool(schema)
	}
	history := t.History()
	r.msgs = Rebuild(history)
	r.toldMode = lastToldMode(r.msgs)
	if opts.Project != nil {
		r.project = opts.Project(info)
	}
	r.model = l.sessionModel(info.ID, opts)
	r.window = l.contextWindow(ctx, r.model, opts)
	l.costOf(info.ID, history)
	if focus, ok := compactCommand(t.Prompt()); ok {
		return r.manualCompact(ctx, focus)
	}

	prompt := PromptMessageRead(t.Prompt(), opts.Images, func(uri string) bridge.Mention { return t.ReadMention(ctx, uri) })
	r.add(r.withModeReminder(prompt))

	stop, err := r.steps(ctx)
	if err != nil || r.final == nil || ctx.Err() != nil {
		return stop, err
	}
	switch {
	case r.final.value != nil:
		if serr := t.SetStructured(r.final.value); serr != nil {
			// The bridge validates with the same validator: only a bug
			// gets here.
			t.FailStructured(&bridge.StructuredError{Message: serr.Error()})
			return stop, nil
		}
		t.NewMessage()
		t.Text(indentJSON(r.final.value))
	case r.final.failure != nil:
		t.FailStructured(r.final.failure)
		t.NewMessage()
		t.Text("\n\n⚠ " + r.final.failure.Message)
	}
	return stop, nil
}

// steps is the request/tool-call cycle of a prompt turn or a sub-turn.
func (r *run) steps(ctx context.Context) (acp.StopReason, error) {
	for step := 0; ; step++ {
		if step >= r.maxRequests {
			if r.sub == nil {
				r.t.NewMessage()
				r.t.Text(fmt.Sprintf("\n\nStopped: this turn reached its limit of %d model requests. Send another prompt to continue.", r.maxRequests))
			}
			return acp.StopMaxTurnRequests, nil
		}
		if !r.maybeCompact(ctx) {
			return acp.StopCancelled, nil
		}
		r.requests++
		resp, err := r.request(ctx)
		if ctx.Err() != nil {
			r.keepPartial(resp)
			return acp.StopCancelled, nil
		}
		if err != nil && r.sub == nil && !r.overflowRetried && llm.IsContextOverflow(err) {
			// The provider counts differently from our estimate: compact
			// for real and send the request again, once.
			r.overflowRetried = true
			r.opts.Logger.Info("context overflow; compacting and retrying", "session", r.sessionID, "err", err)
			if cerr := r.compact(ctx, bridge.CompactionOverflow, ""); cerr == nil {
				step--
				r.requests--
				continue
			}
			if ctx.Err() != nil {
				return acp.StopCancelled, nil
			}
		}
		if err != nil {
			r.keepPartial(resp)
			r.opts.Logger.Warn("model request failed", "session", r.sessionID, "scope", r.scope, "err", err)
			if !r.shown || r.sub != nil {
				return "", fmt.Errorf("model request failed: %w", err)
			}
			r.t.NewMessage()
			r.t.Text(fmt.Sprintf("\n\n⚠ The model request failed, so this turn ends here: %v", err))
			return acp.StopEndTurn, nil
		}
		r.overflowRetried = false
		var cost *float64
		if u := resp.Usage; u != (llm.Usage{}) {
			r.lastActual = int(u.Input + u.CacheRead + u.CacheWrite)
			r.lastEstimate = r.sentEstimate
			cost = r.account(u, resp.Model)
		}
		calls := resp.Message.ToolCalls()
		switch {
		case len(resp.Message.Parts) > 0:
			r.addResponse(resp.Message, cost)
		case cost != nil && r.sub == nil:
			r.rememberCost(*cost)
		}
		if r.sub != nil && cost != nil {
			r.rememberCost(*cost)
		}
		if len(calls) == 0 {
			r.answer = resp.Message.Text()
			stop := stopReason(resp.StopReason)
			if r.final != nil && stop == acp.StopEndTurn {
				// The turn may only end through the final tool.
				if r.final.refuse(finalMissing) {
					return stop, nil
				}
				r.add(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: r.final.reminder()}}})
				continue
			}
			return stop, nil
		}
		results := r.execute(ctx, calls)
		r.add(r.withModeReminder(llm.Message{Role: llm.RoleUser, Parts: results}))
		if ctx.Err() != nil {
			return acp.StopCancelled, nil
		}
		if r.final != nil && (r.final.value != nil || r.final.failure != nil) {
			return acp.StopEndTurn, nil
		}
	}
}

// run is the state of one turn, or of one sub-turn inside a tool call.
type run struct {
	loop        *Loop
	opts        Options
	t           *bridge.Turn
	sessionID   string
	scope       string // where tools resolve: the session, or a subagent's child scope
	maxRequests int
	msgs        []llm.Message
	shown       bool   // something of this turn reached the editor
	requests    int    // model requests made
	answer      string // the text of the last response without tool calls
	sub         *Subturn
	final       *finalTool // nil unless an output schema was asked for
	project     Project
	toldMode    policy.Mode // the mode the conversation last told the model
	model       string      // the model the requests name
	window      int         // its context window

	// Compaction's size estimates (see compact.go): the fixed part of a
	// request (system prompt and tools), the estimate of the last request
	// sent, and the real prompt size of the last response with usage and
	// the estimate of its request.
	fixedTokens, sentEstimate, lastActual, lastEstimate int
	overflowRetried, autoCompactFailed                  bool
	// msgTokens are the estimates of msgs' first messages, which only grow
	// by appending until a compaction replaces them.
	msgTokens []int
}

// add appends a message to the conversation and remembers it. A sub-turn's
// conversation is its own: it is not part of the session's history (the
// parent sees the task's result).
func (r *run) add(m llm.Message) { r.addResponse(m, nil) }

// addResponse is add, with the cost of the response m was, if known.
func (r *run) addResponse(m llm.Message, cost *float64) {
	r.msgs = append(r.msgs, m)
	if r.sub != nil {
		return
	}
	msg, err := json.Marshal(&m)
	if err == nil {
		if len(r.msgTokens) == len(r.msgs)-1 {
			// The estimate is of these bytes: not encoded twice.
			r.msgTokens = append(r.msgTokens, tokensOf(msg)+messageOverhead)
		}
		var rec []byte
		if rec, err = messageRecord(msg, cost); err == nil {
			err = r.t.Remember(rec)
		}
	}
	if err != nil {
		r.opts.Logger.Error("history record not stored", "session", r.sessionID, "err", err)
	}
}

// keepPartial remembers the text a failed or cancelled response had
// produced, so that the next turn's model sees what the user saw. Tool
// calls of a partial response are dropped (they never ran), and so is its
// reasoning: a thinking block cut short has no signature, and providers
// refuse it back.
func (r *run) keepPartial(resp *llm.Response) {
	if resp == nil {
		return
	}
	var parts []llm.Part
	for _, p := range resp.Message.Parts {
		if t, ok := p.(*llm.Text); ok && t.Text != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		r.add(llm.Message{Role: llm.RoleAssistant, Parts: parts})
	}
}

// request sends the conversation to the model and streams the reply.
func (r *run) request(ctx context.Context) (*llm.Response, error) {
	info := r.t.SessionInfo()
	schemas := r.toolSchemas()
	tools := make([]llm.ToolSchema, 0, len(schemas)+1)
	for _, s := range schemas {
		if r.final != nil && s.Name == FinalToolName {
			continue // the final tool shadows a registered one
		}
		tools = append(tools, llm.ToolSchema{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	instructions := r.opts.Instructions
	project := r.project
	if p := r.t.Project(); p != nil && r.sub == nil && r.opts.Project == nil {
		// Re-read for every request: an edited AGENTS.md applies to the
		// next one (and the prompt stays byte-stable while none changes).
		project = projectOf(p)
	}
	if r.sub != nil {
		instructions = joinInstructions(instructions, subagentInstructions)
	}
	if r.final != nil {
		tools = append(tools, r.final.schema())
		instructions = joinInstructions(instructions, finalInstructions)
	}
	req := &llm.Request{
		Model:     r.model,
		System:    System{Info: info, Project: project, NoTools: len(tools) == 0, Instructions: instructions}.String(),
		Messages:  r.msgs,
		Tools:     tools,
		MaxTokens: r.opts.MaxTokens,
	}
	r.fixedTokens = estimateTokens(req.System) + estimateTokens(req.Tools)
	r.sentEstimate = r.fixedTokens + r.conversationTokens()
	if r.sub == nil {
		r.t.NewMessage()
	}
	resp, err := r.opts.Provider.Stream(ctx, req, func(ev llm.Event) {
		switch ev := ev.(type) {
		case llm.TextDelta:
			if ev.Text != "" {
				r.shown = true
				r.emit(SubturnEvent{Text: ev.Text})
			}
		case llm.ReasoningDelta:
			if ev.Text != "" {
				r.shown = true
				r.emit(SubturnEvent{Thought: ev.Text})
			}
		}
	})
	if resp == nil && err == nil {
		err = errors.New("the provider returned no response")
	}
	return resp, err
}

// emit shows streamed text: in the editor's reply for a prompt turn, to
// the sub-turn's observer for a sub-turn.
func (r *run) emit(ev SubturnEvent) {
	if r.sub != nil {
		if r.sub.Observe != nil {
			r.sub.Observe(ev)
		}
		return
	}
	switch {
	case ev.Text != "":
		r.t.Text(ev.Text)
	case ev.Thought != "":
		r.t.Thought(ev.Thought)
	}
}

// toolSchemas are the tools the run's scope may call.
func (r *run) toolSchemas() []registry.ToolSchema {
	if r.sub == nil {
		return r.t.Tools()
	}
	return r.opts.Registry.Schemas(r.scope)
}

// MaxConcurrentCalls is how many read-only calls of one response run at
// once. A model may ask for a thousand reads in one response: run all at
// once, they are a thousand goroutines whose stacks, arguments and results
// are alive together (with 50 such sessions, most of a 500 MB peak), and
// they gain nothing on a machine with a few cores over a bounded set that
// keeps every core busy.
const MaxConcurrentCalls = 8

// execute runs the calls of one response through the bridge and returns
// their results in call order. Consecutive read-only calls run
// concurrently, at most [MaxConcurrentCalls] at a time, started in order;
// a call that may change the workspace (or whose kind is unknown) waits
// for the calls before it and runs alone.
func (r *run) execute(ctx context.Context, calls []*llm.ToolCall) []llm.Part {
	results := make([]llm.Part, len(calls))
	r.shown = true
	runOne := func(i int) {
		c := calls[i]
		args := json.RawMessage(c.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}") // some servers send no text for argument-less calls
		}
		if r.final != nil && c.Name == FinalToolName {
			results[i] = r.final.check(c)
			return
		}
		call := bridge.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
		if s := r.sub; s != nil {
			call.ID = s.CallIDPrefix + c.ID
			call.Scope = s.Scope
			call.Parent = s.Parent
			call.TitlePrefix = s.TitlePrefix
			r.emit(SubturnEvent{Call: c.Name})
		}
		res := r.t.Execute(ctx, call)
		if r.sub != nil {
			r.emit(SubturnEvent{Call: c.Name, Done: true, Failed: res.IsError})
		}
		results[i] = ToolResult(c, res)
	}
	var batch []int // consecutive read-only calls, by index
	for i, c := range calls {
		if r.readOnly(c.Name) {
			batch = append(batch, i)
			continue
		}
		runConcurrently(batch, runOne)
		batch = batch[:0]
		runOne(i)
	}
	runConcurrently(batch, runOne)
	return results
}

// runConcurrently runs f for each index of batch on at most
// MaxConcurrentCalls workers, which take the indices in order, and returns
// when every f has. Workers, not a goroutine per call: each new goroutine
// grows its stack again as a call's stages deepen, 4–5 % of a read call's
// CPU in a turn of a thousand reads.
func runConcurrently(batch []int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(MaxConcurrentCalls, len(batch)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= len(batch) {
					return
				}
				f(batch[k])
			}
		})
	}
	wg.Wait()
}

// readOnly reports whether a tool is known not to change the workspace.
func (r *run) readOnly(name string) bool {
	if r.opts.Registry == nil {
		return false
	}
	def, ok := r.opts.Registry.Lookup(r.scope, name)
	if !ok || def.Kind == "" || def.Delegates {
		return false
	}
	return !def.Kind.Mutates()
}

// stopReason maps a model stop reason to ACP's.
func stopReason(s llm.StopReason) acp.StopReason {
	switch s {
	case llm.StopMaxTokens:
		return acp.StopMaxTokens
	case llm.StopRefusal:
		return acp.StopRefusal
	case llm.StopCancelled:
		return acp.StopCancelled
	}
	return acp.StopEndTurn
}
