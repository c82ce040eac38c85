package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON-RPC and ACP error codes.
const (
	CodeParseError       int64 = -32700
	CodeInvalidRequest   int64 = -32600
	CodeMethodNotFound   int64 = -32601
	CodeInvalidParams    int64 = -32602
	CodeInternalError    int64 = -32603
	CodeRequestCancelled int64 = -32800
	CodeAuthRequired     int64 = -32000
	CodeResourceNotFound int64 = -32002
)

// Error is a JSON-RPC error carrying an ACP code. Two Errors match with [errors.Is] when their
// codes are equal, so callers branch on the sentinels below:
//
//	return fmt.Errorf("%w: unknown session %q", acp.ErrInvalidParams, id)
//	if errors.Is(err, acp.ErrRequestCancelled) { … }
//
// When an error leaves a handler, the connection sends the innermost *Error's code with the
// whole error's text as the message (and the *Error's Data).
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // optional; any JSON value
}

// Sentinels, one per code. Wrap them with %w; never modify them.
var (
	ErrParse            = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest   = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound   = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams    = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal         = &Error{Code: CodeInternalError, Message: "internal error"}
	ErrRequestCancelled = &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	ErrAuthRequired     = &Error{Code: CodeAuthRequired, Message: "authentication required"}
	ErrResourceNotFound = &Error{Code: CodeResourceNotFound, Message: "resource not found"}
)

// NewError returns an *Error with code and message.
func NewError(code int64, message string) *Error { return &Error{Code: code, Message: message} }

// ResourceNotFound returns a -32002 error whose data is {"uri": uri}.
func ResourceNotFound(uri string) *Error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &Error{Code: CodeResourceNotFound, Message: "resource not found: " + uri, Data: data}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("acp error %d", e.Code)
	}
	return e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// toWireError converts any handler error into the error that goes on the wire. It is the one
// place where errors are converted: an *Error anywhere in the chain gives the code (and data),
// the outer error gives the message; a context cancellation is -32800; anything else -32603.
func toWireError(err error) *Error {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return &Error{Code: ae.Code, Message: err.Error(), Data: ae.Data}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeRequestCancelled, Message: "request cancelled: " + err.Error()}
	default:
		return &Error{Code: CodeInternalError, Message: err.Error()}
	}
}
