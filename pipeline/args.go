package pipeline

import (
	"fmt"

	"github.com/dsh-tools/dshd/internal/jsonscan"
)

// DefaultMaxArgumentBytes is the default limit on the size of a call's raw
// arguments.
const DefaultMaxArgumentBytes = 1 << 20

// maxDepth bounds the nesting of arguments, so that hostile input cannot
// exhaust the stack of the validator or of a tool's decoder.
const maxDepth = 512

// ArgumentsError says why a call's raw arguments were rejected before any
// policy ran. It becomes an INVALID_ARGS result.
type ArgumentsError struct {
	// Offset is the byte offset of the problem in the raw arguments, or -1.
	Offset int
	Reason string
}

func (e *ArgumentsError) Error() string {
	if e.Offset < 0 {
		return "invalid arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid arguments at byte %d: %s", e.Offset, e.Reason)
}

// ErrorCode is the registry error code of the failure.
func (e *ArgumentsError) ErrorCode() string { return "INVALID_ARGS" }

// canonicalArguments validates raw call arguments and returns their
// canonical form.
//
// Accepted: exactly one JSON object (RFC 8259) in valid UTF-8, at most max
// bytes, no duplicate member names at any depth (names compared after
// unescaping), no lone UTF-16 surrogate escapes, nesting at most maxDepth.
// Empty (zero-length) arguments mean an empty object: a Go caller passing
// nil means "no arguments"; whitespace alone is rejected.
//
// Canonical form: the input with insignificant whitespace removed; member
// order, string escapes and numbers exactly as written. That keeps numbers
// lossless (no float64 rounding) and makes the canonical bytes a pure
// function of the input, so the circuit breaker's "identical call" and the
// approval's "what the human saw" are both defined on these bytes. Every
// decoder (a guard's, the tool's) decodes the same bytes to the same
// values, because nothing ambiguous (duplicates, invalid UTF-8, lone
// surrogates) is accepted.
func canonicalArguments(in []byte, max int) (string, error) {
	if len(in) == 0 {
		return "{}", nil
	}
	if len(in) > max {
		return "", &ArgumentsError{Offset: -1, Reason: fmt.Sprintf("arguments are %d bytes; the limit is %d", len(in), max)}
	}
	i := 0
	for i < len(in) && (in[i] == ' ' || in[i] == '\t' || in[i] == '\n' || in[i] == '\r') {
		i++
	}
	if i < len(in) && in[i] != '{' {
		return "", &ArgumentsError{Offset: i, Reason: "arguments must be a JSON object"}
	}
	out, err := jsonscan.Canonical(in, maxDepth)
	if se, ok := err.(*jsonscan.SyntaxError); ok { // its only error
		return "", &ArgumentsError{Offset: se.Offset, Reason: se.Reason}
	}
	return out, err
}
