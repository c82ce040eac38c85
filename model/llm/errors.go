package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// APIError is an error reported by the provider: a non-2xx HTTP status or
// an error event in the middle of a stream (StatusCode 0 then).
type APIError struct {
	Provider   string // "openai", "anthropic"
	StatusCode int
	Type       string // provider's error type or code, if any
	Message    string
	// Retryable reports whether sending the same request again may succeed
	// (408, 409, 429, 5xx, overload events).
	Retryable bool
	// RetryAfter is the server's requested wait (retry-after-ms or
	// retry-after), zero when it named none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := e.Provider + ": "
	if e.StatusCode != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.StatusCode)
	}
	if e.Type != "" {
		s += e.Type + ": "
	}
	if e.Message == "" {
		return s + "no message"
	}
	return s + e.Message
}

var (
	// ErrIdleTimeout: no bytes arrived on the response stream for the
	// configured idle period; the request was cancelled.
	ErrIdleTimeout = errors.New("model stream idle for too long")
	// ErrTruncated: the stream ended without its finish marker.
	ErrTruncated = errors.New("model stream ended before it was complete")
)

// RetryPolicy says how often and how patiently an adapter retries a
// request that failed before anything of it was emitted.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt;
	// negative means none, 0 means the default (4).
	MaxRetries int
	// BaseDelay is the first backoff (default 500ms); it doubles per
	// retry, with jitter.
	BaseDelay time.Duration
	// MaxDelay caps both the backoff and a server's retry-after (default
	// 30s).
	MaxDelay time.Duration
	// Sleep waits d or until ctx is done; nil means a real timer. Tests
	// replace it to observe delays without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}
