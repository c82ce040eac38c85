package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Tools is what the pipeline needs of the registry: *registry.Registry
// satisfies it.
type Tools interface {
	// Lookup resolves name for a call made in scope.
	Lookup(scope, name string) (*registry.Definition, bool)
	// Visible lists the tools scope may call (for UNKNOWN_TOOL messages).
	Visible(scope string) []*registry.Definition
}

// Option configures a [Pipeline].
type Option func(*Pipeline)

// WithMaxArgumentBytes sets the limit on the size of raw arguments
// (default [DefaultMaxArgumentBytes]; n <= 0 keeps the default).
func WithMaxArgumentBytes(n int) Option {
	return func(p *Pipeline) {
		if n > 0 {
			p.maxArgs = n
		}
	}
}

// WithDefaultDecision sets the decision of the tools/pre-execute waterfall
// when every listener defers (or there is none). The default is
// [AllowOnce], so a bare pipeline runs tools; the bridge's mode and rule
// listeners are what normally decide. Use [Ask] or [Deny] for a
// fail-closed deployment.
func WithDefaultDecision(d PreDecision) Option {
	return func(p *Pipeline) { d.by = DefaultDecider; p.defaultDecision = d }
}

// WithBreakerThreshold sets how many identical failing calls trip the
// circuit breaker (default 3); n <= 0 disables it.
func WithBreakerThreshold(n int) Option { return func(p *Pipeline) { p.breaker.threshold = n } }

// WithLogger sets where contained panics and observer errors are logged
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(p *Pipeline) { p.log = l } }

// DefaultDecider is what [PreDecision.DecidedBy] says of the pipeline's
// default decision.
const DefaultDecider = "(default)"

// Pipeline runs tool calls. It is safe for concurrent use; registering,
// removing and reordering listeners is safe while calls run.
type Pipeline struct {
	tools           Tools
	maxArgs         int
	defaultDecision PreDecision
	log             *slog.Logger
	breaker         breaker

	mu    sync.Mutex // serialises writers of hooks
	hooks atomic.Pointer[hooks]

	stragglers atomic.Int64
}

// New returns a pipeline resolving tools through tools.
func New(tools Tools, opts ...Option) *Pipeline {
	p := &Pipeline{
		tools:           tools,
		maxArgs:         DefaultMaxArgumentBytes,
		defaultDecision: PreDecision{Action: PreAllowOnce, by: DefaultDecider},
		log:             slog.Default(),
		breaker:         newBreaker(3),
	}
	p.hooks.Store(&hooks{})
	for _, o := range opts {
		o(p)
	}
	return p
}

// Stragglers is the number of tool bodies still running after Execute gave
// up on them (cancellation or timeout of a tool that ignores its context).
// Each abandoned call leaks exactly one goroutine, which ends when the tool
// body returns; nothing else is retained. A growing figure names a tool
// that must learn to honour its context.
func (p *Pipeline) Stragglers() int64 { return p.stragglers.Load() }

// Outcome is the authoritative, frozen outcome of one call.
type Outcome struct {
	// Execution is the frozen identity of the call.
	Execution *Execution
	// Result is the normalised, frozen result; it is the caller's own copy.
	Result registry.Result
	// JSON is Result as frozen (the exact bytes that round-tripped); the
	// caller's own copy, ready for the durable log.
	JSON json.RawMessage
	// Err is non-nil exactly when Result.IsError: a *ToolNotFoundError,
	// *ArgumentsError, *DeniedError or *ToolFailure.
	Err error
	// Dispatched reports whether the tool's body was started.
	Dispatched bool
}

// Execute runs one call through every stage and returns its frozen
// outcome. It never fails: every failure is an isError result, and the
// observers have seen the outcome before Execute returns.
//
// ctx is the call's signal: cancelling it denies a pending approval and
// ends a running tool with CANCELLED (TIMEOUT for a deadline), promptly
// even if the tool ignores it.
func (p *Pipeline) Execute(ctx context.Context, in Input) Outcome {
	exec := &Execution{
		token:  newToken(),
		parent: in.Parent,
		tool:   in.Tool,
		callID: in.CallID,
		scope:  in.Scope,
		kind:   presentation.KindOther,
		host:   in.Host,
		ctx:    ctx,
	}
	def, ok := p.tools.Lookup(in.Scope, in.Tool)
	if !ok || def == nil {
		return p.fail(exec, p.unknownTool(in.Scope, in.Tool))
	}
	exec.def = def
	if def.Kind != "" {
		exec.kind = def.Kind
	}
	args, err := canonicalArguments(in.Arguments, p.maxArgs)
	if err != nil {
		return p.fail(exec, err)
	}
	exec.args = args
	// What runs is captured now: a hook changing the Definition later
	// cannot change this call.
	body, timeoutMs := def.Execute, def.TimeoutMs
	if def.Subjects != nil {
		if err := p.computeSubjects(exec, def); err != nil {
			return p.fail(exec, err)
		}
	}

	key := p.breaker.key(exec.tool, exec.args)
	if p.breaker.refuse(exec.scope, key) {
		return p.fail(exec, &DeniedError{
			Stage: StageBreaker,
			Reason: fmt.Sprintf("this exact call (tool %q with the same arguments) has already failed %d times; it was not run again. "+
				"Change your approach: different arguments, a different tool, or ask the user", exec.tool, p.breaker.threshold),
		})
	}

	// Arguments the tool would refuse are refused before any policy runs:
	// nobody is asked to approve a call that cannot run.
	if err := def.ValidateArgs(json.RawMessage(exec.args)); err != nil {
		out := p.failWithResult(exec, err)
		p.record(ctx, exec, key, out)
		return out
	}

	if err := p.policy(ctx, exec, in.Approver); err != nil {
		out := p.fail(exec, err)
		p.record(ctx, exec, key, out)
		return out
	}

	d := &dispatch{p: p, exec: exec, body: body, timeoutMs: timeoutMs, onStart: in.OnStart}
	d.wrappers = p.hooks.Load().wrappers
	d.depth = -1
	result := d.next(ctx)
	result = p.postExecute(exec, result)
	out := p.finish(exec, Outcome{Dispatched: d.started}, result)
	p.record(ctx, exec, key, out)
	return out
}

// record feeds the circuit breaker, unless the caller cancelled: a
// cancelled turn says nothing about the call.
func (p *Pipeline) record(ctx context.Context, exec *Execution, key uint64, out Outcome) {
	if ctx.Err() == nil {
		p.breaker.record(exec.scope, key, out.Result)
	}
}

func (p *Pipeline) unknownTool(scope, name string) error {
	var names []string
	for _, d := range p.tools.Visible(scope) {
		if d != nil {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return &ToolNotFoundError{Name: name, Scope: scope, Available: names}
}

func (p *Pipeline) computeSubjects(exec *Execution, def *registry.Definition) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p.logPanic("subjects hook", exec, v)
			err = &ToolFailure{Code: registry.CodeToolError, Message: fmt.Sprintf("tool %q: its subjects hook panicked: %v", exec.tool, v)}
		}
	}()
	exec.subjects = slices.Clone(def.Subjects(exec))
	return nil
}

func (p *Pipeline) logPanic(where string, exec *Execution, v any) {
	p.log.Error("pipeline: panic contained", "where", where, "tool", exec.tool, "callID", exec.callID,
		"scope", exec.scope, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// policy runs tools/pre-execute, the guards and, on ask, the approval
// channel (and the guards again). It returns nil only for an allowed-once
// call.
func (p *Pipeline) policy(ctx context.Context, exec *Execution, approver Approver) error {
	h := p.hooks.Load()
	w := &waterfall[PreListener, struct{}, PreDecision]{p: p, exec: exec, chain: h.pre, depth: -1}
	d := w.next()
	switch d.Action {
	case PreAllowOnce, PreAsk:
	case PreDeny:
		return &DeniedError{Stage: StagePreExecute, By: d.by, Reason: d.Reason}
	default:
		return &DeniedError{Stage: StagePreExecute, By: d.by, Reason: "the listener returned no decision"}
	}
	if err := p.guard(h, exec); err != nil {
		return err
	}
	if d.Action == PreAllowOnce {
		return nil
	}
	if err := p.approve(ctx, exec, approver, d); err != nil {
		return err
	}
	// The human may have taken minutes; guards registered meanwhile apply.
	return p.guard(p.hooks.Load(), exec)
}

func (p *Pipeline) approve(ctx context.Context, exec *Execution, approver Approver, d PreDecision) (err error) {
	deny := func(reason string) error { return &DeniedError{Stage: StageApproval, By: d.by, Reason: reason} }
	if approver == nil {
		return deny("approval needed (" + d.Reason + ") but there is no approval channel for this call")
	}
	if ctx.Err() != nil {
		return deny("the call was cancelled before it could be approved")
	}
	defer func() {
		if v := recover(); v != nil {
			p.logPanic("approver", exec, v)
			err = deny(fmt.Sprintf("the approval channel failed: %v", v))
		}
	}()
	req := AskRequest{Reason: d.Reason, AskedBy: d.by, Arguments: exec.Arguments(), Subjects: exec.Subjects()}
	a, aerr := approver.Approve(ctx, exec, req)
	switch {
	case aerr != nil:
		return deny("the approval request failed: " + aerr.Error())
	case ctx.Err() != nil:
		return deny("the approval request was cancelled")
	case !a.AllowedOnce:
		if a.Reason == "" {
			return deny("the user did not allow the call")
		}
		return deny(a.Reason)
	}
	return nil
}

func (p *Pipeline) guard(h *hooks, exec *Execution) error {
	for _, g := range h.guards {
		if reason := p.runGuard(exec, g); reason != "" {
			return &DeniedError{Stage: StageGuard, By: g.name, Reason: reason}
		}
	}
	for _, g := range h.scopeGuards[exec.scope] {
		if reason := p.runGuard(exec, g); reason != "" {
			return &DeniedError{Stage: StageGuard, By: g.name, Reason: reason}
		}
	}
	return nil
}

func (p *Pipeline) runGuard(exec *Execution, g named[Guard]) (reason string) {
	defer func() {
		if v := recover(); v != nil {
			p.logPanic("guard "+g.name, exec, v)
			reason = fmt.Sprintf("the guard failed (panic: %v)", v)
		}
	}()
	return g.fn(exec)
}

// waterfall runs a listener chain, tools/pre-execute or
// tools/post-execute: depth is the index of the listener currently
// running; next runs the one after it, and end is the decision when the
// chain is exhausted. Listeners must call next synchronously. A listener
// that panics is contained and decides what its decision type says
// ([PreDecision.failed]: deny; [PostDecision.failed]: block, failing
// closed, since a post listener may exist to redact the result).
type waterfall[L listener[X, D], X any, D decision[D]] struct {
	p     *Pipeline
	exec  *Execution
	arg   X // what the listeners judge besides exec: post-execute's result
	chain chain[L]
	depth int
	nextf func() D
}

// listener is a PreListener (X is struct{}) or a PostListener (X is the
// result).
type listener[X, D any] interface {
	decide(exec *Execution, arg X, next func() D) D
}

// decision is a PreDecision or a PostDecision; its methods work on the
// zero value too.
type decision[D any] interface {
	// exhausted is the decision when no listener decided.
	exhausted(p *Pipeline) D
	decidedBy(name string) D
	failed(name string, panicked any) D
	// stage names the stage in logs.
	stage() string
}

func (l PreListener) decide(exec *Execution, _ struct{}, next func() PreDecision) PreDecision {
	return l(exec, next)
}

func (l PostListener) decide(exec *Execution, result registry.Result, next func() PostDecision) PostDecision {
	return l(exec, result, next)
}

func (PreDecision) exhausted(p *Pipeline) PreDecision { return p.defaultDecision }
func (PostDecision) exhausted(*Pipeline) PostDecision { return PostDecision{by: DefaultDecider} }
func (PreDecision) stage() string                     { return StagePreExecute }
func (PostDecision) stage() string                    { return StagePostExecute }

func (d PreDecision) decidedBy(name string) PreDecision {
	if d.by == "" {
		d.by = name
	}
	return d
}

func (d PostDecision) decidedBy(name string) PostDecision {
	if d.by == "" {
		d.by = name
	}
	return d
}

func (PreDecision) failed(name string, v any) PreDecision {
	return PreDecision{Action: PreDeny, Reason: fmt.Sprintf("the listener failed (panic: %v)", v), by: name}
}

func (PostDecision) failed(name string, _ any) PostDecision {
	return PostDecision{Action: PostBlock, Feedback: fmt.Sprintf("the result could not be checked (%s listener %q failed)", StagePostExecute, name), by: name}
}

func (w *waterfall[L, X, D]) next() D {
	i := w.depth + 1
	if i >= len(w.chain) {
		var zero D
		return zero.exhausted(w.p)
	}
	if w.nextf == nil {
		w.nextf = w.next
	}
	saved := w.depth
	w.depth = i
	d := w.run(w.chain[i])
	w.depth = saved
	return d
}

func (w *waterfall[L, X, D]) run(l named[L]) (d D) {
	defer func() {
		if v := recover(); v != nil {
			w.p.logPanic(d.stage()+" listener "+l.name, w.exec, v)
			d = d.failed(l.name, v)
		}
	}()
	return l.fn.decide(w.exec, w.arg, w.nextf).decidedBy(l.name)
}

// dispatch runs tools/execute: the wrappers, then the tool.
type dispatch struct {
	p         *Pipeline
	exec      *Execution
	body      registry.ExecuteFunc
	timeoutMs float64
	onStart   func(*Execution)
	wrappers  chain[Wrapper]
	depth     int
	nextf     func(context.Context) registry.Result
	started   bool
}

func (d *dispatch) next(ctx context.Context) registry.Result {
	i := d.depth + 1
	if i >= len(d.wrappers) {
		return d.runBody(ctx)
	}
	if d.nextf == nil {
		d.nextf = d.next
	}
	saved := d.depth
	d.depth = i
	r := d.runWrapper(ctx, d.wrappers[i])
	d.depth = saved
	return r
}

func (d *dispatch) runWrapper(ctx context.Context, w named[Wrapper]) (r registry.Result) {
	defer func() {
		if v := recover(); v != nil {
			d.p.logPanic("wrapper "+w.name, d.exec, v)
			r = failure(registry.CodeToolError, fmt.Sprintf("tools/execute wrapper %q failed (panic: %v)", w.name, v))
		}
	}()
	return w.fn(ctx, d.exec, d.nextf)
}

// failure is an isError result.
func failure(code, msg string) registry.Result { return registry.ErrorResult(code, msg) }

func (d *dispatch) runBody(parent context.Context) registry.Result {
	if d.started {
		// A wrapper called next twice: the tool runs once per call.
		return failure(registry.CodeToolError, "a tools/execute wrapper tried to run the tool twice")
	}
	if err := parent.Err(); err != nil {
		return d.contextResult(parent, parent)
	}
	ctx := parent
	if d.timeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, time.Duration(d.timeoutMs*float64(time.Millisecond)))
		defer cancel()
	}
	d.started = true
	if d.onStart != nil {
		d.callOnStart()
	}
	if d.body == nil {
		return failure(registry.CodeToolError, fmt.Sprintf("tool %q has no body", d.exec.tool))
	}
	args := []byte(d.exec.args) // the tool's own copy
	if ctx.Done() == nil {
		// Nothing can cancel the call: run it here.
		return d.invoke(parent, ctx, args)
	}
	ch := make(chan registry.Result, 1)
	var state atomic.Int32 // 0 running, 1 returned, 2 abandoned
	go func() {
		ch <- d.invoke(parent, ctx, args)
		if !state.CompareAndSwap(0, 1) {
			d.p.stragglers.Add(-1)
		}
	}()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		if !state.CompareAndSwap(0, 2) {
			return <-ch // it returned meanwhile: its result stands
		}
		d.p.stragglers.Add(1)
		return d.contextResult(parent, ctx)
	}
}

func (d *dispatch) callOnStart() {
	defer func() {
		if v := recover(); v != nil {
			d.p.logPanic("OnStart", d.exec, v)
		}
	}()
	d.onStart(d.exec)
}

// contextResult is the TIMEOUT or CANCELLED result of a call whose context
// ended; parent is the context the innermost layer received, ctx the one
// the tool ran under (parent plus the tool's own timeout).
func (d *dispatch) contextResult(parent, ctx context.Context) registry.Result {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure(registry.CodeCancelled, fmt.Sprintf("the call to %q was cancelled", d.exec.tool))
	}
	if d.timeoutMs > 0 && parent.Err() == nil {
		return failure(registry.CodeTimeout, fmt.Sprintf("the call to %q timed out after %v (the tool's limit)", d.exec.tool,
			time.Duration(d.timeoutMs*float64(time.Millisecond))))
	}
	return failure(registry.CodeTimeout, fmt.Sprintf("the call to %q ran past its deadline", d.exec.tool))
}

// invoke runs the tool body, containing a panic and mapping a returned
// error to a structured result.
func (d *dispatch) invoke(parent, ctx context.Context, args []byte) (r registry.Result) {
	defer func() {
		if v := recover(); v != nil {
			d.p.logPanic("tool", d.exec, v)
			r = failure(registry.CodeToolError, fmt.Sprintf("the tool %q failed (panic: %v)", d.exec.tool, v))
		}
	}()
	r, err := d.body(ctx, d.exec, args)
	if err == nil {
		return r
	}
	var withResult ResultError
	var coded ErrorCoder
	switch {
	case errors.As(err, &withResult):
		r = withResult.Result()
		r.IsError = true
		return r
	case errors.As(err, &coded) && coded.ErrorCode() != "":
		r = failure(coded.ErrorCode(), err.Error())
		var detailed interface{ ErrorDetails() json.RawMessage }
		if errors.As(err, &detailed) {
			r.Error.Details = detailed.ErrorDetails()
		}
		return r
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return d.contextResult(parent, ctx)
	}
	return failure(registry.CodeToolError, fmt.Sprintf("the tool %q failed: %v", d.exec.tool, err))
}

// postExecute runs the tools/post-execute waterfall.
func (p *Pipeline) postExecute(exec *Execution, r registry.Result) registry.Result {
	h := p.hooks.Load()
	if len(h.post) == 0 {
		return r
	}
	w := &waterfall[PostListener, registry.Result, PostDecision]{p: p, exec: exec, arg: r, chain: h.post, depth: -1}
	d := w.next()
	switch d.Action {
	case PostReplace:
		r.Content = slices.Clone(d.Content)
		return r
	case PostBlock:
		msg := d.Feedback
		if msg == "" {
			msg = fmt.Sprintf("the result was blocked by %s %q", StagePostExecute, d.by)
		}
		out := failure(registry.CodeDenied, msg)
		out.Error.Details = stageDetails(StagePostExecute, d.by)
		return out
	case PostKeep:
		return r
	}
	return failure(registry.CodeToolError, fmt.Sprintf("%s listener %q returned an unknown action", StagePostExecute, d.by))
}

func stageDetails(stage, by string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Stage string `json:"stage"`
		By    string `json:"by,omitempty"`
	}{stage, by})
	return b
}

// fail finishes a call that failed before or instead of dispatch.
// failWithResult fails the call with the result err carries (a
// [ResultError] such as the registry's ToolArgsError), else as fail does.
func (p *Pipeline) failWithResult(exec *Execution, err error) Outcome {
	var withResult ResultError
	if !errors.As(err, &withResult) {
		return p.fail(exec, err)
	}
	r := withResult.Result()
	r.IsError = true
	return p.finish(exec, Outcome{Err: err}, r)
}

func (p *Pipeline) fail(exec *Execution, err error) Outcome {
	code := registry.CodeToolError
	var coded ErrorCoder
	if errors.As(err, &coded) {
		code = coded.ErrorCode()
	}
	r := failure(code, err.Error())
	var de *DeniedError
	if errors.As(err, &de) {
		r.Error.Details = stageDetails(de.Stage, de.By)
	}
	return p.finish(exec, Outcome{Err: err}, r)
}

// finish freezes r into the outcome and hands it to the tools/result
// observers.
func (p *Pipeline) finish(exec *Execution, out Outcome, r registry.Result) Outcome {
	frozen, data, ferr := freeze(r)
	if ferr != nil {
		fail := &ToolFailure{Code: registry.CodeInvalidResult, Err: ferr,
			Message: fmt.Sprintf("the result of tool %q cannot be represented losslessly as JSON: %v", exec.tool, ferr)}
		frozen, data, ferr = freeze(failure(fail.Code, fail.Message))
		if ferr != nil { // unreachable: the message is made valid UTF-8 by freeze
			frozen, data, _ = freeze(failure(registry.CodeInvalidResult, "the result cannot be represented as JSON"))
		}
		out.Err = fail
	}
	if frozen.IsError && out.Err == nil {
		out.Err = &ToolFailure{Code: frozen.Error.Code, Message: frozen.Error.Message}
	}
	out.Execution, out.Result, out.JSON = exec, frozen, data
	if obs := p.hooks.Load().observers; len(obs) > 0 {
		for _, o := range obs {
			p.observe(exec, o, frozen)
		}
	}
	return out
}

func (p *Pipeline) observe(exec *Execution, o named[Observer], frozen registry.Result) {
	defer func() {
		if v := recover(); v != nil {
			p.logPanic("tools/result observer "+o.name, exec, v)
		}
	}()
	if err := o.fn(exec, cloneResult(frozen)); err != nil {
		p.log.Warn("pipeline: tools/result observer failed", "observer", o.name, "tool", exec.tool,
			"callID", exec.callID, "scope", exec.scope, "err", err)
	}
}
