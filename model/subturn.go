package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/structured"
)

// Subturn describes a nested turn: a subagent that a tool body (the task
// tool) runs inside the prompt turn that called it. The sub-turn has its
// own conversation, starting with Prompt, and its own tool list (the
// child Scope's); its tool calls go through the prompt turn's
// [bridge.Turn.Execute], so the session's pipeline, modes, rules, guards
// and ask channel apply to them exactly as to the parent's, and each one
// carries Parent as its parent token.
type Subturn struct {
	// Prompt is the task, sent as the sub-turn's first user message.
	Prompt string
	// Scope is the child scope the sub-turn's tools resolve and run in
	// ("<session>/<child>"), made by the caller with registry.Restrict and
	// removed by it afterwards.
	Scope string
	// Parent is the token of the call running the sub-turn.
	Parent pipeline.Token
	// CallIDPrefix is put before the model's call ids, so the sub-turn's
	// calls have ids of their own in the session (and name their parent).
	CallIDPrefix string
	// TitlePrefix is put before the titles of the sub-turn's calls in the
	// editor ("task ‹name›: ").
	TitlePrefix string
	// MaxRequests caps the sub-turn's model requests (0, or more than the
	// loop's MaxTurnRequests: the loop's cap).
	MaxRequests int
	// OutputSchema, optional, demands a structured answer (see
	// [FinalToolName]); it must pass structured.AssertSupported.
	OutputSchema json.RawMessage
	// Observe, optional, sees the sub-turn's progress as it happens. It is
	// called from the sub-turn's goroutines, one event at a time per tool
	// call; it must not block.
	Observe func(SubturnEvent)
}

// SubturnEvent is one step of a sub-turn: streamed text or reasoning, or a
// tool call starting (Done false) or ending.
type SubturnEvent struct {
	Text    string
	Thought string
	// Call is the tool name of a call event.
	Call   string
	Done   bool
	Failed bool
}

// SubturnResult is how a sub-turn ended.
type SubturnResult struct {
	// StopReason is why it stopped: end_turn, max_turn_requests (the
	// MaxRequests cap), max_tokens, refusal or cancelled.
	StopReason acp.StopReason
	// Answer is the text of the sub-turn's last response.
	Answer string
	// Structured is the validated value, with an OutputSchema.
	Structured json.RawMessage
	// StructuredError, with an OutputSchema, says why there is no value.
	StructuredError *bridge.StructuredError
	// Requests counts the model requests made.
	Requests int
}

// ErrNoRegistry is returned by [Loop.RunSubturn] when the loop has no
// registry to resolve a child scope's tools.
var ErrNoRegistry = errors.New("model: sub-turns need Options.Registry")

// RunSubturn runs a sub-turn inside the prompt turn t (the turn of the
// tool call running it, see [bridge.TurnOf]) and returns when the
// sub-turn's model ends, its request cap is hit, its structured answer is
// accepted or refused for good, or ctx is done. A model failure is an
// error; so is an unsupported OutputSchema (a *structured.OutputSchemaError,
// before any model request).
func (l *Loop) RunSubturn(ctx context.Context, t *bridge.Turn, s Subturn) (SubturnResult, error) {
	opts := l.Options()
	if opts.Registry == nil {
		return SubturnResult{}, ErrNoRegistry
	}
	if s.OutputSchema != nil {
		if err := structured.AssertSupported(s.OutputSchema); err != nil {
			return SubturnResult{}, err
		}
	}
	info := t.SessionInfo()
	if s.Scope == "" {
		return SubturnResult{}, fmt.Errorf("model: RunSubturn: no child scope")
	}
	maxRequests := opts.MaxTurnRequests
	if s.MaxRequests > 0 && s.MaxRequests < maxRequests {
		maxRequests = s.MaxRequests
	}
	r := &run{loop: l, opts: opts, t: t, sessionID: info.ID, scope: s.Scope, maxRequests: maxRequests, sub: &s}
	r.model = l.sessionModel(info.ID, opts)
	r.window = l.contextWindow(ctx, r.model, opts)
	if s.OutputSchema != nil {
		r.final = newFinalTool(s.OutputSchema)
	}
	r.add(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: s.Prompt}}})
	stop, err := r.steps(ctx)
	out := SubturnResult{StopReason: stop, Answer: r.answer, Requests: r.requests}
	if ctx.Err() != nil {
		out.StopReason = acp.StopCancelled
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if r.final != nil {
		out.Structured = r.final.value
		out.StructuredError = r.final.failure
		if out.Structured == nil && out.StructuredError == nil {
			out.StructuredError = &bridge.StructuredError{Message: fmt.Sprintf("the subagent stopped (%s) without a structured answer", stop)}
		}
	}
	return out, nil
}
