package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-tools/dshd/model/llm"
)

// DefaultHeaderTimeout bounds the wait for response headers. Local servers
// may load a model before answering, so it is generous.
const DefaultHeaderTimeout = 5 * time.Minute

// DefaultIdleTimeout is how long a stream may stay silent (not even a
// keep-alive) before it is cancelled.
const DefaultIdleTimeout = 3 * time.Minute

// NewClient returns an HTTP client with a response-header timeout and no
// overall timeout: a long stream must not be killed because it is long.
func NewClient(headerTimeout time.Duration) *http.Client {
	if headerTimeout <= 0 {
		headerTimeout = DefaultHeaderTimeout
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = headerTimeout
	return &http.Client{Transport: t}
}

// ErrorParser extracts the provider's error type and message from an error
// response body; it returns empty strings when the body is not its format.
type ErrorParser func(body []byte) (typ, msg string)

// Stream is an open response body guarded by the idle watchdog.
type Stream struct {
	Body   io.Reader
	Header http.Header
	close  func()
}

// Close releases the response and stops the watchdog.
func (s *Stream) Close() { s.close() }

// Open sends req (built without a context; Open attaches one) and returns
// the body of a 2xx response. A non-2xx response becomes an *llm.APIError
// whose message has the secret scrubbed out. Reading the body fails with
// an error wrapping [llm.ErrIdleTimeout] when nothing arrives for idle.
func Open(ctx context.Context, client *http.Client, req *http.Request, idle time.Duration, provider string, secret llm.Secret, parse ErrorParser) (*Stream, error) {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	rctx, cancel := context.WithCancelCause(ctx)
	resp, err := client.Do(req.WithContext(rctx))
	if err != nil {
		cancel(nil)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The URL error may quote the request URL (some servers take the
		// key as a query parameter): scrub it, keep it retryable.
		return nil, ConnectionError(fmt.Errorf("%s: %s", provider, secret.Scrub(err.Error())))
	}
	if resp.StatusCode/100 != 2 {
		defer cancel(nil)
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, StatusError(provider, resp, body, secret, parse)
	}
	w := &watchdog{body: resp.Body, cancel: cancel, ctx: rctx}
	w.timer = time.AfterFunc(idle, func() { cancel(llm.ErrIdleTimeout) })
	w.idle = idle
	var once sync.Once
	return &Stream{Body: w, Header: resp.Header, close: func() {
		once.Do(func() {
			w.timer.Stop()
			cancel(nil)
			resp.Body.Close()
		})
	}}, nil
}

// StatusError builds the *llm.APIError for a non-2xx response.
func StatusError(provider string, resp *http.Response, body []byte, secret llm.Secret, parse ErrorParser) *llm.APIError {
	e := &llm.APIError{Provider: provider, StatusCode: resp.StatusCode}
	if parse != nil {
		e.Type, e.Message = parse(body)
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500] + "…"
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	e.Message = secret.Scrub(e.Message)
	e.Retryable = RetryableStatus(resp.StatusCode)
	e.RetryAfter = RetryAfter(resp.Header, time.Now())
	return e
}

// RetryableStatus reports whether a request that got this status may
// succeed when sent again.
func RetryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// RetryAfter reads retry-after-ms (milliseconds, as OpenAI and Anthropic
// send) or else retry-after (seconds or an HTTP date). Zero means none.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

type watchdog struct {
	body   io.Reader
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	idle   time.Duration
}

func (w *watchdog) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.timer.Reset(w.idle)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if cause := context.Cause(w.ctx); errors.Is(cause, llm.ErrIdleTimeout) {
			return n, fmt.Errorf("%w (%s)", llm.ErrIdleTimeout, w.idle)
		}
	}
	return n, err
}

// Transient reports whether err is worth a retry when nothing was shown
// yet: connection failures, cut streams, idle timeouts, and API errors
// marked retryable.
func Transient(err error) bool {
	var api *llm.APIError
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &api):
		return api.Retryable
	case errors.Is(err, llm.ErrIdleTimeout), errors.Is(err, llm.ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, errConnection)
}

var errConnection = errors.New("connection failed")

// ConnectionError marks err as a connection-level failure (so [Transient]
// accepts it) while keeping its text.
func ConnectionError(err error) error {
	return fmt.Errorf("%w: %w", errConnection, err)
}

func retryAfterOf(err error) time.Duration {
	var api *llm.APIError
	if errors.As(err, &api) {
		return api.RetryAfter
	}
	return 0
}
