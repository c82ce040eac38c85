package pipeline

import (
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/registry"
)

// Stages, as named in DENIED results and in [DeniedError].
const (
	StagePreExecute  = "tools/pre-execute"
	StageGuard       = "guard"
	StageApproval    = "approval"
	StagePostExecute = "tools/post-execute"
	StageBreaker     = "circuit-breaker"
)

// ErrorCoder is implemented by errors that carry a registry error code.
// A tool body returning such an error (the registry's ToolArgsError, for
// instance) gets an isError result with that code instead of TOOL_ERROR.
type ErrorCoder interface {
	ErrorCode() string
}

// ResultError is implemented by errors that know the isError result the
// model should see (the registry's ToolArgsError lists every argument
// problem in its details). A tool body returning one gets that result,
// marked isError. It takes precedence over [ErrorCoder].
type ResultError interface {
	error
	Result() registry.Result
}

// ToolNotFoundError is the failure of a call naming a tool that is not
// visible to its scope (UNKNOWN_TOOL). It names only tools the scope can
// see, never hidden ones.
type ToolNotFoundError struct {
	Name      string
	Scope     string
	Available []string
}

func (e *ToolNotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("unknown tool %q: no tools are available", e.Name)
	}
	return fmt.Sprintf("unknown tool %q; available tools: %s", e.Name, strings.Join(e.Available, ", "))
}

// ErrorCode is UNKNOWN_TOOL.
func (e *ToolNotFoundError) ErrorCode() string { return registry.CodeUnknownTool }

// DeniedError is a refusal by policy (DENIED): which stage, which
// listener, guard or rule, and why.
type DeniedError struct {
	Stage  string
	By     string
	Reason string
}

func (e *DeniedError) Error() string {
	var b strings.Builder
	b.WriteString("denied by ")
	b.WriteString(e.Stage)
	if e.By != "" {
		fmt.Fprintf(&b, " %q", e.By)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	return b.String()
}

// ErrorCode is DENIED.
func (e *DeniedError) ErrorCode() string { return registry.CodeDenied }

// ToolFailure is any other failure: the tool's returned error or panic
// (TOOL_ERROR, or the code the error carried), a timeout (TIMEOUT), a
// cancellation (CANCELLED), a result that does not survive JSON
// (INVALID_RESULT), or an isError result the tool made itself.
type ToolFailure struct {
	Code    string
	Message string
	// Err is the underlying error, if there was one.
	Err error
}

func (e *ToolFailure) Error() string { return e.Code + ": " + e.Message }

// ErrorCode is the failure's code.
func (e *ToolFailure) ErrorCode() string { return e.Code }

func (e *ToolFailure) Unwrap() error { return e.Err }
