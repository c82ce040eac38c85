package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// PreAction is what a tools/pre-execute decision says.
type PreAction int

const (
	// The zero PreAction is not a decision: a listener returning the zero
	// PreDecision denies (fail closed).
	_ PreAction = iota
	// PreAllowOnce grants this one execution. It is the only decision that
	// lets a call proceed.
	PreAllowOnce
	// PreDeny refuses the call.
	PreDeny
	// PreAsk hands the decision to the caller's [Approver].
	PreAsk
)

func (a PreAction) String() string {
	switch a {
	case PreAllowOnce:
		return "allow-once"
	case PreDeny:
		return "deny"
	case PreAsk:
		return "ask"
	}
	return fmt.Sprintf("PreAction(%d)", int(a))
}

// PreDecision is the outcome of the tools/pre-execute waterfall. Build it
// with [AllowOnce], [Deny] or [Ask]. There is deliberately no way to rewrite
// the arguments: history, audit, UI and execution must agree.
type PreDecision struct {
	Action PreAction
	// Reason says why (deny, ask); it is shown to the model on a denial and
	// to the human on an ask.
	Reason string

	// by names the listener that made the decision; the pipeline fills it
	// in, so a listener cannot pretend another one decided.
	by string
}

// AllowOnce grants this one execution.
func AllowOnce() PreDecision { return PreDecision{Action: PreAllowOnce} }

// Deny refuses the call; reason tells the model why.
func Deny(reason string) PreDecision { return PreDecision{Action: PreDeny, Reason: reason} }

// Ask hands the call to the approval channel; reason tells the human why
// they are asked.
func Ask(reason string) PreDecision { return PreDecision{Action: PreAsk, Reason: reason} }

// DecidedBy names the listener that made the decision ("" for the
// pipeline's default decision).
func (d PreDecision) DecidedBy() string { return d.by }

// PreListener is one step of the tools/pre-execute waterfall. It returns a
// decision to short-circuit, or next() to defer to the listeners after it
// (and, after the last, to the pipeline's default decision). It may inspect
// next()'s decision and return a stricter one.
//
// next must be called synchronously, before the listener returns; calling
// it twice runs the listeners after this one twice. A panic denies the
// call (fail closed) and is logged.
type PreListener func(exec *Execution, next func() PreDecision) PreDecision

// Guard is final, scope-aware pre-dispatch policy. It has no way to allow:
// "" preserves the waterfall's decision, any other string denies with that
// reason, and nothing after it can undo the denial.
type Guard func(exec *Execution) (reason string)

// Wrapper is one layer of tools/execute, around dispatch. It should call next
// to run the layers inside it and, eventually, the tool; it may derive a new
// context for them (a deadline, a trace span), and it may replace the result
// next returns. Nothing else of the call can change. next must be called
// synchronously; the tool runs at most once per call (a second next
// returns a TOOL_ERROR result). A wrapper that returns without calling
// next short-circuits the tool (a cache). A panic is a TOOL_ERROR result.
type Wrapper func(ctx context.Context, exec *Execution, next func(context.Context) registry.Result) registry.Result

// PostAction is what a tools/post-execute decision says.
type PostAction int

const (
	// PostKeep keeps the result (the zero value, and the default).
	PostKeep PostAction = iota
	// PostReplace replaces the result's content (what the model reads).
	PostReplace
	// PostBlock turns the result into an isError result carrying Feedback.
	PostBlock
)

// PostDecision is the outcome of the tools/post-execute waterfall. Build it
// with [Keep], [Replace] or [Block].
type PostDecision struct {
	Action PostAction
	// Content replaces the result's content (PostReplace).
	Content []presentation.Content
	// Feedback is the corrective message for the model (PostBlock).
	Feedback string

	by string
}

// Keep keeps the result as it is.
func Keep() PostDecision { return PostDecision{} }

// Replace replaces the content of the result (the rest of it, including
// its error and its card, stays).
func Replace(content ...presentation.Content) PostDecision {
	return PostDecision{Action: PostReplace, Content: content}
}

// Block replaces the result by an isError result (code DENIED) carrying
// feedback that tells the model what to do instead.
func Block(feedback string) PostDecision {
	return PostDecision{Action: PostBlock, Feedback: feedback}
}

// PostListener is one step of the tools/post-execute waterfall: it sees the
// tool's result and returns a decision, or next() to defer (the first
// listener not deferring decides; the default is [Keep]). It runs for
// every call that passed policy, failed tool calls included. next must be
// called synchronously. A panic blocks the result (fail closed: the
// listener may exist to redact it) and is logged.
type PostListener func(exec *Execution, result registry.Result, next func() PostDecision) PostDecision

// Observer is a tools/result listener. It receives the frozen execution and
// its own copy of the frozen result; it cannot change the outcome. A
// returned error or a panic is logged and otherwise ignored.
type Observer func(exec *Execution, result registry.Result) error

// Position says where a named listener goes in its chain.
type Position struct {
	where int // 0 last, 1 first, 2 before, 3 after
	ref   string
}

var (
	// Last appends to the chain (the zero Position).
	Last = Position{}
	// First prepends to the chain.
	First = Position{where: 1}
)

// Before places a listener just before the one named ref.
func Before(ref string) Position { return Position{where: 2, ref: ref} }

// After places a listener just after the one named ref.
func After(ref string) Position { return Position{where: 3, ref: ref} }

// Registration errors.
var (
	// ErrDuplicateName: a listener of that name is already in the chain.
	ErrDuplicateName = errors.New("pipeline: duplicate listener name")
	// ErrNoSuchListener: the listener a Position or a Move names is not
	// in the chain.
	ErrNoSuchListener = errors.New("pipeline: no such listener")
	// ErrInvalidListener: the name is empty or the function is nil.
	ErrInvalidListener = errors.New("pipeline: invalid listener")
)

// named is one entry of a chain.
type named[F any] struct {
	name string
	fn   F
}

// chain is an immutable ordered list of named listeners; every change
// returns a new chain.
type chain[F any] []named[F]

func (c chain[F]) index(name string) int {
	return slices.IndexFunc(c, func(n named[F]) bool { return n.name == name })
}

func (c chain[F]) with(name string, fn F, pos Position, isNil bool) (chain[F], error) {
	if name == "" || isNil {
		return nil, fmt.Errorf("%w: %q", ErrInvalidListener, name)
	}
	if c.index(name) >= 0 {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateName, name)
	}
	at := len(c)
	switch pos.where {
	case 1:
		at = 0
	case 2, 3:
		i := c.index(pos.ref)
		if i < 0 {
			return nil, fmt.Errorf("%w: %q (placing %q)", ErrNoSuchListener, pos.ref, name)
		}
		at = i
		if pos.where == 3 {
			at = i + 1
		}
	}
	out := make(chain[F], 0, len(c)+1)
	out = append(out, c[:at]...)
	out = append(out, named[F]{name, fn})
	return append(out, c[at:]...), nil
}

func (c chain[F]) without(name string) (chain[F], bool) {
	i := c.index(name)
	if i < 0 {
		return c, false
	}
	return slices.Concat(c[:i], c[i+1:]), true
}

// hooks is one immutable snapshot of every registration.
type hooks struct {
	pre         chain[PreListener]
	guards      chain[Guard]
	scopeGuards map[string]chain[Guard]
	wrappers    chain[Wrapper]
	post        chain[PostListener]
	observers   chain[Observer]
}

// update applies change to a copy of the current snapshot and publishes
// it. Writers are serialised; readers never block.
func (p *Pipeline) update(change func(h *hooks) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := *p.hooks.Load()
	if err := change(&h); err != nil {
		return err
	}
	p.hooks.Store(&h)
	return nil
}

// addTo inserts fn, named name, at pos in the chain of the snapshot that
// field selects; isNil says fn is nil (which the type parameter cannot
// say).
func addTo[F any](p *Pipeline, field func(*hooks) *chain[F], name string, fn F, pos Position, isNil bool) error {
	return p.update(func(h *hooks) (err error) {
		c := field(h)
		*c, err = c.with(name, fn, pos, isNil)
		return err
	})
}

// removeFrom removes the listener named name from the chain of the
// snapshot that field selects; it reports whether it was there.
func removeFrom[F any](p *Pipeline, field func(*hooks) *chain[F], name string) bool {
	var found bool
	_ = p.update(func(h *hooks) error {
		c := field(h)
		*c, found = c.without(name)
		return nil
	})
	return found
}

// AddPre inserts a tools/pre-execute listener.
func (p *Pipeline) AddPre(name string, l PreListener, pos Position) error {
	return addTo(p, func(h *hooks) *chain[PreListener] { return &h.pre }, name, l, pos, l == nil)
}

// RemovePre removes a tools/pre-execute listener; it reports whether it
// was there.
func (p *Pipeline) RemovePre(name string) bool {
	return removeFrom(p, func(h *hooks) *chain[PreListener] { return &h.pre }, name)
}

// MovePre moves a tools/pre-execute listener to pos, atomically: no call
// sees the chain without it.
func (p *Pipeline) MovePre(name string, pos Position) error {
	return p.update(func(h *hooks) error {
		i := h.pre.index(name)
		if i < 0 {
			return fmt.Errorf("%w: %q", ErrNoSuchListener, name)
		}
		l := h.pre[i].fn
		rest, _ := h.pre.without(name)
		moved, err := rest.with(name, l, pos, false)
		if err != nil {
			return err
		}
		h.pre = moved
		return nil
	})
}

// PreListeners lists the names of the tools/pre-execute listeners in order.
func (p *Pipeline) PreListeners() []string {
	h := p.hooks.Load()
	names := make([]string, len(h.pre))
	for i, n := range h.pre {
		names[i] = n.name
	}
	return names
}

// AddGuard registers a guard for every scope.
func (p *Pipeline) AddGuard(name string, g Guard) error {
	return addTo(p, func(h *hooks) *chain[Guard] { return &h.guards }, name, g, Last, g == nil)
}

// RemoveGuard removes a global guard.
func (p *Pipeline) RemoveGuard(name string) bool {
	return removeFrom(p, func(h *hooks) *chain[Guard] { return &h.guards }, name)
}

// AddScopeGuard registers a guard that applies only to calls of scope.
func (p *Pipeline) AddScopeGuard(scope, name string, g Guard) error {
	return p.update(func(h *hooks) error {
		c, err := h.scopeGuards[scope].with(name, g, Last, g == nil)
		if err != nil {
			return err
		}
		h.scopeGuards = maps1(h.scopeGuards, scope, c)
		return nil
	})
}

// RemoveScopeGuard removes one guard of scope.
func (p *Pipeline) RemoveScopeGuard(scope, name string) bool {
	var found bool
	_ = p.update(func(h *hooks) error {
		var c chain[Guard]
		if c, found = h.scopeGuards[scope].without(name); found {
			h.scopeGuards = maps1(h.scopeGuards, scope, c)
		}
		return nil
	})
	return found
}

// RemoveScope forgets everything the pipeline keeps for scope: its guards
// and its circuit-breaker state. The bridge calls it when a session (or a
// subagent scope) ends.
func (p *Pipeline) RemoveScope(scope string) {
	_ = p.update(func(h *hooks) error {
		if _, ok := h.scopeGuards[scope]; ok {
			h.scopeGuards = maps1(h.scopeGuards, scope, nil)
		}
		return nil
	})
	p.breaker.forget(scope)
}

// maps1 returns a copy of m with scope set to c (deleted when c is empty).
func maps1(m map[string]chain[Guard], scope string, c chain[Guard]) map[string]chain[Guard] {
	out := make(map[string]chain[Guard], len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	if len(c) == 0 {
		delete(out, scope)
	} else {
		out[scope] = c
	}
	return out
}

// AddWrapper inserts a tools/execute wrapper; the first in the chain is
// the outermost.
func (p *Pipeline) AddWrapper(name string, w Wrapper, pos Position) error {
	return addTo(p, func(h *hooks) *chain[Wrapper] { return &h.wrappers }, name, w, pos, w == nil)
}

// RemoveWrapper removes a tools/execute wrapper.
func (p *Pipeline) RemoveWrapper(name string) bool {
	return removeFrom(p, func(h *hooks) *chain[Wrapper] { return &h.wrappers }, name)
}

// AddPost inserts a tools/post-execute listener.
func (p *Pipeline) AddPost(name string, l PostListener, pos Position) error {
	return addTo(p, func(h *hooks) *chain[PostListener] { return &h.post }, name, l, pos, l == nil)
}

// RemovePost removes a tools/post-execute listener.
func (p *Pipeline) RemovePost(name string) bool {
	return removeFrom(p, func(h *hooks) *chain[PostListener] { return &h.post }, name)
}

// AddObserver appends a tools/result observer.
func (p *Pipeline) AddObserver(name string, o Observer) error {
	return addTo(p, func(h *hooks) *chain[Observer] { return &h.observers }, name, o, Last, o == nil)
}

// RemoveObserver removes a tools/result observer.
func (p *Pipeline) RemoveObserver(name string) bool {
	return removeFrom(p, func(h *hooks) *chain[Observer] { return &h.observers }, name)
}
