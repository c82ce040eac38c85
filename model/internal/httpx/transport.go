package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/model/internal/sse"
	"github.com/dsh-tools/dshd/model/llm"
)

// Transport is the network side of an adapter's configuration. The adapters
// embed it in their Config (through an alias, since callers outside model/
// cannot name this package), so its fields are theirs. The zero value is
// usable; [WithDefaults] fills it in.
//
// The helpers that use it are functions, not methods: methods would be
// promoted onto the adapters' public Config types.
type Transport struct {
	// HTTPClient defaults to one with a response-header timeout and no
	// overall timeout: a long stream must not be killed for being long.
	HTTPClient *http.Client
	// HeaderTimeout bounds the wait for response headers when HTTPClient
	// is nil (default 5 minutes: local servers may load a model first).
	HeaderTimeout time.Duration
	// IdleTimeout cancels a stream that sends nothing, not even a
	// keep-alive, for this long (default 3 minutes).
	IdleTimeout time.Duration
	// Retry says how a request that failed before anything of it was
	// emitted is retried.
	Retry llm.RetryPolicy
	// Logger receives retry warnings; nil means slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns t with HTTPClient and Logger set. The timeouts and
// the retry policy keep their zero values, which the functions using them
// read as the defaults.
func WithDefaults(t Transport) Transport {
	if t.HTTPClient == nil {
		t.HTTPClient = NewClient(t.HeaderTimeout)
	}
	if t.Logger == nil {
		t.Logger = slog.Default()
	}
	return t
}

// RunStream runs attempt under t's retry policy (see [Retry]) and returns the
// response of the last attempt. attempt returns the response it
// accumulated (never nil), whether it emitted anything, and its error. If
// ctx ends, the response's StopReason becomes [llm.StopCancelled] and the
// error wraps ctx's error, whatever the attempt returned: the caller
// cancelled, and the partial message is still worth keeping.
func RunStream(ctx context.Context, t Transport, provider string, attempt func(ctx context.Context) (resp *llm.Response, emitted bool, err error)) (*llm.Response, error) {
	var resp *llm.Response
	err := Retry(ctx, t.Retry, t.Logger, func(ctx context.Context) (bool, error) {
		r, emitted, err := attempt(ctx)
		resp = r
		return emitted, err
	})
	if ctx.Err() != nil {
		resp.StopReason = llm.StopCancelled
		return resp, fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	return resp, err
}

// Post is one streaming request of an adapter.
type Post struct {
	Provider string // names the adapter in errors
	URL      string
	Body     []byte // JSON
	// Header is set after Content-Type and Accept: the adapter's
	// authentication and version headers.
	Header map[string]string
	// Extra is set last, so the user's configured headers win.
	Extra  map[string]string
	Secret llm.Secret // scrubbed from error messages
	Parse  ErrorParser
}

// OpenPost sends p as a POST asking for an event stream, with t's client
// and idle timeout, and returns the open body as [Open] does.
func OpenPost(ctx context.Context, t Transport, p Post) (*Stream, error) {
	req, err := http.NewRequest(http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Provider, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range p.Header {
		req.Header.Set(k, v)
	}
	for k, v := range p.Extra {
		req.Header.Set(k, v)
	}
	return Open(ctx, t.HTTPClient, req, t.IdleTimeout, p.Provider, p.Secret, p.Parse)
}

// State is what an adapter accumulates during one attempt: the response
// so far (never nil) and whether anything was emitted, which forbids a
// retry.
type State interface {
	Response() *llm.Response
	Emitted() bool
}

// StreamJSON encodes request once and runs attempts under t's retry policy
// ([RunStream]): each gets the encoded body and a fresh state from
// newState, and the state makes the attempt's response.
func StreamJSON[S State](ctx context.Context, t Transport, provider string, request any, newState func() S, attempt func(ctx context.Context, body []byte, s S) error) (*llm.Response, error) {
	body, err := json.Marshal(request)
	if err != nil {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}, fmt.Errorf("%s: encoding request: %w", provider, err)
	}
	return RunStream(ctx, t, provider, func(ctx context.Context) (*llm.Response, bool, error) {
		s := newState()
		err := attempt(ctx, body, s)
		return s.Response(), s.Emitted(), err
	})
}

// ReadEvents reads the server-sent events of body and hands each
// non-empty one to event (its data trimmed) until event reports done or
// fails. At a clean end of the stream it returns what end says (nil when
// the message was complete, a truncation error when it was not: only the
// adapter can tell); any other failed read is described by [readError].
func ReadEvents(ctx context.Context, provider string, body io.Reader, event func(typ, data string) (done bool, err error), end func() error) error {
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && ctx.Err() == nil {
				return end()
			}
			return readError(ctx, provider, err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" {
			continue
		}
		if done, err := event(ev.Type, data); err != nil || done {
			return err
		}
	}
}

// readError describes a failed read of an event stream other than a clean
// end: ctx's error if it ended, an error wrapping [llm.ErrTruncated] for a
// stream cut mid-event, else the read error.
func readError(ctx context.Context, provider string, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: %w: %w", provider, llm.ErrTruncated, err)
	}
	return fmt.Errorf("%s: reading stream: %w", provider, err)
}
