package openai

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

	"github.com/dsh-tools/dshd/model/internal/httpx"
	"github.com/dsh-tools/dshd/model/internal/sse"
	"github.com/dsh-tools/dshd/model/llm"
)

// DefaultBaseURL is OpenAI's API root.
const DefaultBaseURL = "https://api.openai.com/v1"

// APIKeyEnv is the environment variable read by default for the key.
const APIKeyEnv = "OPENAI_API_KEY"

const providerName = "openai"

// Config configures a Provider. The zero value talks to OpenAI without a
// key; most fields have defaults.
type Config struct {
	// BaseURL is the API root, ending before /chat/completions, e.g.
	// http://localhost:11434/v1 for Ollama. Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when non-empty. Local servers need
	// none.
	APIKey llm.Secret
	// Model is used when a request names none.
	Model string
	// MaxTokens is used when a request sets none; 0 leaves the field out.
	MaxTokens int
	// MaxCompletionTokens sends the limit as max_completion_tokens (OpenAI
	// reasoning models) instead of max_tokens.
	MaxCompletionTokens bool
	// NoStreamUsage leaves out stream_options.include_usage, for servers
	// that reject it.
	NoStreamUsage bool
	// SendReasoning sends earlier reasoning back as reasoning_content, for
	// servers that want it (most reject or ignore it).
	SendReasoning bool
	// Headers are added to every request (e.g. OpenRouter's HTTP-Referer).
	Headers map[string]string
	// HTTPClient defaults to one with a response-header timeout and no
	// overall timeout.
	HTTPClient *http.Client
	// HeaderTimeout bounds the wait for response headers when HTTPClient
	// is nil (default 5 minutes: local servers may load a model first).
	HeaderTimeout time.Duration
	// IdleTimeout cancels a stream that sends nothing for this long
	// (default 3 minutes).
	IdleTimeout time.Duration
	Retry       llm.RetryPolicy
	// Logger receives retry warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Provider streams Chat Completions. It is safe for concurrent use.
type Provider struct {
	cfg Config
	url string
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = httpx.NewClient(cfg.HeaderTimeout)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"}
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	body, err := json.Marshal(p.buildRequest(req))
	if err != nil {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}, fmt.Errorf("openai: encoding request: %w", err)
	}
	var resp *llm.Response
	err = httpx.Retry(ctx, p.cfg.Retry, p.cfg.Logger, func(ctx context.Context) (bool, error) {
		s := newStreamState(emit)
		err := p.attempt(ctx, body, s)
		resp = s.response()
		return s.emitted, err
	})
	if ctx.Err() != nil {
		resp.StopReason = llm.StopCancelled
		return resp, fmt.Errorf("openai: %w", ctx.Err())
	}
	return resp, err
}

func (p *Provider) attempt(ctx context.Context, body []byte, s *streamState) error {
	hreq, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey.Reveal())
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	st, err := httpx.Open(ctx, p.cfg.HTTPClient, hreq, p.cfg.IdleTimeout, providerName, p.cfg.APIKey, parseError)
	if err != nil {
		return err
	}
	defer st.Close()
	if ct := st.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// The server ignored "stream": true and sent the whole completion.
		return s.whole(st.Body)
	}
	r := sse.NewReader(st.Body)
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				if s.finished {
					return s.finish()
				}
				return fmt.Errorf("openai: %w (no finish_reason or [DONE])", llm.ErrTruncated)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("openai: %w: %w", llm.ErrTruncated, err)
			}
			return fmt.Errorf("openai: reading stream: %w", err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			return s.finish()
		}
		if data == "" {
			continue
		}
		if err := s.handle(ev.Type, []byte(data)); err != nil {
			return err
		}
	}
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// parseError reads {"error": {...}} bodies, and the bare {"message"} or
// {"error": "text"} shapes some local servers use.
func parseError(body []byte) (string, string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	var e wireError
	if json.Unmarshal(v.Error, &e) == nil && e.Message != "" {
		return errorType(e), e.Message
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil && s != "" {
		return "", s
	}
	return "", v.Message
}

func errorType(e wireError) string {
	if e.Type != "" {
		return e.Type
	}
	if e.Code != nil {
		return fmt.Sprint(e.Code)
	}
	return ""
}

// streamErrorRetryable guesses from an in-stream error whether a new
// attempt may succeed: overloads, rate limits and server errors.
func streamErrorRetryable(e wireError) bool {
	s := strings.ToLower(e.Type + " " + fmt.Sprint(e.Code) + " " + e.Message)
	for _, k := range []string{"overloaded", "rate_limit", "rate limit", "server_error", "timeout", "unavailable", "429", "500", "502", "503", "504", "529"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// String describes p without its key: fmt cannot redact the key inside
// unexported fields by itself.
func (p *Provider) String() string {
	return fmt.Sprintf("openai.Provider{url: %s, model: %s}", p.url, p.cfg.Model)
}

// GoString is String, so %#v cannot print the key either.
func (p *Provider) GoString() string { return p.String() }
