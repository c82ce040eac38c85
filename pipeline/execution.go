package pipeline

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Token is the opaque identity of one execution. Tokens are comparable
// (==, map keys); the zero Token means "none". Only the pipeline can make a
// non-zero Token, so a parent token always names an execution that really
// happened.
type Token struct{ id *tokenID }

type tokenID struct{ seq uint64 }

var tokenSeq atomic.Uint64

func newToken() Token { return Token{&tokenID{seq: tokenSeq.Add(1)}} }

// IsZero reports whether t is the zero Token.
func (t Token) IsZero() bool { return t.id == nil }

// String is for logs only; it is not the identity.
func (t Token) String() string {
	if t.id == nil {
		return "token(none)"
	}
	return "token#" + strconv.FormatUint(t.id.seq, 10)
}

// Input is a caller-owned request to run one tool call. Execute copies what
// it needs; the caller may reuse the Input (and its Arguments) afterwards.
type Input struct {
	// Tool is the name the model called.
	Tool string
	// Arguments are the raw JSON arguments as the model produced them. Nil
	// or empty means an empty object.
	Arguments json.RawMessage
	// CallID is the model's id of the call.
	CallID string
	// Parent is the token of the execution that started this one (a
	// subagent's task call), or the zero Token.
	Parent Token
	// Scope names the session, or the subagent within a session, making the
	// call. Scope guards, tool visibility and the circuit breaker are per
	// scope.
	Scope string
	// Host is the session the call runs in, which the tool, its presenters
	// and every hook reach through [Execution.Host]; nil runs the call
	// without one.
	Host host.Host
	// Approver answers "ask" decisions. Nil means there is no agent (no
	// human) behind the call: every ask becomes a denial.
	Approver Approver
	// OnStart, when non-nil, is called once policy has allowed the call,
	// right before the tool's body starts (inside every wrapper). The bridge
	// uses it to report in_progress.
	OnStart func(exec *Execution)
}

// Approver is the approval channel: the bridge implements it with
// session/request_permission.
type Approver interface {
	// Approve asks whether the call may run. Only an Approval with
	// AllowedOnce set lets it proceed; an error, a cancelled ctx or any
	// other answer is a denial.
	Approve(ctx context.Context, exec *Execution, req AskRequest) (Approval, error)
}

// ApproverFunc adapts a function to [Approver].
type ApproverFunc func(ctx context.Context, exec *Execution, req AskRequest) (Approval, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, exec *Execution, req AskRequest) (Approval, error) {
	return f(ctx, exec, req)
}

// AskRequest is what the approval channel shows the human.
type AskRequest struct {
	// Reason is why the call needs approval.
	Reason string
	// AskedBy names the pre-execute listener that asked.
	AskedBy string
	// Arguments is a copy of the frozen canonical arguments: byte for byte
	// what the tool will receive if the human grants.
	Arguments json.RawMessage
	// Subjects is what the call touches (the definition's Subjects hook).
	Subjects []registry.Subject
}

// Approval is the approval channel's answer. The zero Approval is a
// denial.
type Approval struct {
	// AllowedOnce grants this one execution.
	AllowedOnce bool
	// Reason says why not (shown to the model in the DENIED result).
	Reason string
}

// Execution is the pipeline-owned, immutable materialisation of one call.
// Every hook of every stage receives the same *Execution; none can change
// it: its fields are unexported and every accessor returns a copy or an
// immutable value. It implements [registry.Call].
type Execution struct {
	token    Token
	parent   Token
	tool     string
	callID   string
	scope    string
	args     string // canonical JSON; "" when the arguments were rejected
	def      *registry.Definition
	kind     presentation.ToolCallKind
	subjects []registry.Subject
	host     host.Host
	ctx      context.Context
}

var _ registry.Call = (*Execution)(nil)

// Token is the execution's identity.
func (e *Execution) Token() Token { return e.token }

// Parent is the token of the execution that started this one.
func (e *Execution) Parent() (Token, bool) { return e.parent, !e.parent.IsZero() }

// ToolName is the name the model called.
func (e *Execution) ToolName() string { return e.tool }

// CallID is the model's id of the call.
func (e *Execution) CallID() string { return e.callID }

// Scope names the scope making the call.
func (e *Execution) Scope() string { return e.scope }

// Host is the session the call runs in ([Input.Host]), nil when none.
func (e *Execution) Host() host.Host { return e.host }

// Arguments returns a fresh copy of the canonical arguments (see
// [Execution.ArgumentsString] for a copy-free view). It is nil when the
// arguments were rejected.
func (e *Execution) Arguments() json.RawMessage {
	if e.args == "" {
		return nil
	}
	return json.RawMessage(e.args)
}

// ArgumentsString returns the canonical arguments as an immutable string,
// without copying. It is "" when the arguments were rejected.
func (e *Execution) ArgumentsString() string { return e.args }

// DecodeArguments decodes the canonical arguments into v, as the tool
// will see them.
func (e *Execution) DecodeArguments(v any) error {
	return json.Unmarshal([]byte(e.args), v)
}

// Definition returns a copy of the resolved tool, and false for an
// unknown tool. A copy, because hooks must not change the registry's
// definition under later calls; what runs in this call was captured at
// materialisation anyway.
func (e *Execution) Definition() (registry.Definition, bool) {
	if e.def == nil {
		return registry.Definition{}, false
	}
	return *e.def, true
}

// Kind is the tool's kind ("other" for an unknown tool): modes use it to
// tell reads from mutations.
func (e *Execution) Kind() presentation.ToolCallKind { return e.kind }

// Subjects returns a copy of what the call touches, as the definition's
// Subjects hook said once at materialisation.
func (e *Execution) Subjects() []registry.Subject {
	if len(e.subjects) == 0 {
		return nil
	}
	return append([]registry.Subject(nil), e.subjects...)
}

// Context is the context of the call as Execute received it: the signal
// that pre-execute listeners, guards and the approval channel observe.
// Inside tools/execute the context passed down the wrappers is the one
// that counts.
func (e *Execution) Context() context.Context { return e.ctx }

// Done is Context().Done().
func (e *Execution) Done() <-chan struct{} { return e.ctx.Done() }
