package registry

import (
	"context"
	"encoding/json"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
)

// Call is what a tool body, a presenter or a subject function sees of the
// call being made: its identity, its frozen arguments and the session it
// runs in (as go-sdk's ServerRequest carries its Session). The pipeline's
// *pipeline.Execution implements it; tests may implement it themselves.
type Call interface {
	// ToolName is the name the model called.
	ToolName() string
	// CallID is the model's (or the editor's) id of the call.
	CallID() string
	// Arguments are the canonical JSON arguments. Callers must not modify
	// the returned bytes.
	Arguments() json.RawMessage
	// Scope names the scope (session, or subagent within a session) that
	// made the call.
	Scope() string
	// Host is the session running the call: its roots, where the call's
	// paths land, files, terminals, progress. It is nil for a call made
	// outside a session (a pipeline run without a host), which a tool that
	// needs one refuses.
	Host() host.Host
}

// SubjectKind says what a policy subject names.
type SubjectKind string

const (
	// SubjectPath is a file system path, as the model wrote it.
	SubjectPath SubjectKind = "path"
	// SubjectCommand is a shell command line.
	SubjectCommand SubjectKind = "command"
	// SubjectOther is anything else a rule may match (a URL, a name).
	SubjectOther SubjectKind = "other"
)

// Subject is what a permission rule or a guard matches a call against: the
// paths a file tool touches, the command line a shell tool runs.
type Subject struct {
	Kind  SubjectKind `json:"kind"`
	Value string      `json:"value"`
	// Writes reports whether the call writes Value (paths only).
	Writes bool `json:"writes,omitempty"`
	// Unsandboxed reports a command the model asked to run outside the OS
	// sandbox (commands only): a person must approve it, every time.
	Unsandboxed bool `json:"unsandboxed,omitempty"`
	// Justification is the model's reason for running it unsandboxed.
	Justification string `json:"justification,omitempty"`
}

// ExecuteFunc is the body of a raw definition. It receives the raw,
// unvalidated arguments: a raw definition validates its own input.
type ExecuteFunc func(ctx context.Context, call Call, args json.RawMessage) (Result, error)

// Definition is one tool: the model-facing fields, the body, and the
// optional presentation and policy hooks. The registry borrows it
// read-only; build it once and never change it after registration.
type Definition struct {
	// Name is what the model calls; it must match ^[a-zA-Z0-9_-]{1,64}$.
	Name string
	// Title is an optional human-readable name.
	Title string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the arguments (an object schema).
	Parameters json.RawMessage
	// Kind picks the icon of the tool's cards and tells modes whether the
	// tool mutates the workspace.
	Kind presentation.ToolCallKind
	// ReadOnlyHint is a claim from outside the daemon (an MCP server's
	// readOnlyHint annotation) that the tool changes nothing. It is a hint
	// for display, never a permission: such a tool keeps a mutating Kind,
	// so modes treat it as one (the bridge lets it run in plan mode only
	// when a permission rule allows it).
	ReadOnlyHint bool
	// TimeoutMs, when positive, bounds one execution.
	TimeoutMs float64
	// Delegates reports that the tool runs other tools (a subagent). It
	// changes nothing itself, so its Kind may say read-only, but the calls
	// it makes may: a loop never runs it alongside other calls.
	Delegates bool

	// Execute runs the tool.
	Execute ExecuteFunc
	// PresentCall, optional, describes the call before it runs.
	PresentCall func(call Call) presentation.CallView
	// PresentResult, optional, describes the completed call. When nil the
	// result's own View (or a generic card of its content) is shown.
	PresentResult func(call Call, result Result) *presentation.ResultView
	// Subjects, optional, names what the call touches, for permission
	// rules, root confinement and remembered grants.
	Subjects func(call Call) []Subject
	// Preview, optional, shows what the call would do before it is
	// allowed: the diff an edit would make, computed without writing
	// anything. The bridge shows it in the permission request. ctx is the
	// execution's context; call.Host() is the session's host, as for
	// Execute. A nil
	// view or an error means "no preview": it never blocks the ask, and
	// the call reports its own failure when it runs.
	Preview func(ctx context.Context, call Call) (*presentation.ResultView, error)

	// CheckArgs, optional, checks a raw definition's arguments (an MCP
	// tool's input schema, through a [Validator]) so that a malformed call
	// is refused before anyone is asked to approve it. It returns nil or a
	// *ToolArgsError. Typed definitions check their own.
	CheckArgs func(args json.RawMessage) error

	// spec is the derived SchemaSpec of a typed definition; nil for a raw one.
	spec *SchemaProp
	// validate checks raw arguments of a typed definition; nil for a raw one.
	validate func(args json.RawMessage) error
}

// ValidateArgs checks arguments the way Execute will, without running the
// tool, so that a caller (the pipeline) can refuse a malformed call before
// asking for permission. It returns nil or a *ToolArgsError. A raw
// definition without CheckArgs validates inside its own Execute only, so
// for it this returns nil.
func (d *Definition) ValidateArgs(args json.RawMessage) error {
	switch {
	case d.validate != nil:
		return d.validate(args)
	case d.CheckArgs != nil:
		return d.CheckArgs(args)
	}
	return nil
}

// Spec returns the per-property vocabulary a typed definition was derived
// from (a copy: changing it changes nothing), or nil for a raw definition.
func (d *Definition) Spec() SchemaSpec {
	if d.spec == nil {
		return nil
	}
	return d.spec.clone().Properties
}

// ToolSchema is the model-facing projection of a Definition: exactly the
// fields a model request may carry, and nothing else.
type ToolSchema struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Error codes of structured tool failures. Every failure of a call ends as
// an isError Result carrying one of these, never as a failed turn.
const (
	CodeUnknownTool   = "UNKNOWN_TOOL"
	CodeInvalidArgs   = "INVALID_ARGS"
	CodeDenied        = "DENIED"
	CodeTimeout       = "TIMEOUT"
	CodeCancelled     = "CANCELLED"
	CodeToolError     = "TOOL_ERROR"
	CodeInvalidResult = "INVALID_RESULT"
)

// ToolError is the structured error of an isError result.
type ToolError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Result is the outcome of one tool call. It must round-trip losslessly
// through JSON: the pipeline freezes it as JSON before observers see it and
// before it is written to the durable session log.
type Result struct {
	// Content is what the model reads.
	Content []presentation.Content `json:"content"`
	// IsError marks a failed call; Error says why in a structured way.
	IsError bool       `json:"isError,omitempty"`
	Error   *ToolError `json:"error,omitempty"`
	// Structured is an optional machine-readable result.
	Structured json.RawMessage `json:"structured,omitempty"`
	// AdditionalContext is extra text for the model that the UI does not
	// show as the result.
	AdditionalContext string `json:"additionalContext,omitempty"`
	// View is the tool's own result card, if it made one.
	View *presentation.ResultView `json:"view,omitempty"`
}

// TextResult returns a successful result with one text block.
func TextResult(text string) Result {
	return Result{Content: []presentation.Content{presentation.Text(text)}}
}

// ErrorResult returns an isError result with a code and a message the model
// can act on.
func ErrorResult(code, message string) Result {
	return Result{
		Content: []presentation.Content{presentation.Text(message)},
		IsError: true,
		Error:   &ToolError{Code: code, Message: message},
	}
}
