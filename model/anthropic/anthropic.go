package anthropic

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

// DefaultBaseURL is Anthropic's API root.
const DefaultBaseURL = "https://api.anthropic.com"

// APIKeyEnv is the environment variable read by default for the key.
const APIKeyEnv = "ANTHROPIC_API_KEY"

// APIVersion is the anthropic-version header sent.
const APIVersion = "2023-06-01"

const providerName = "anthropic"

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root, before /v1/messages. Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey llm.Secret
	// Model is used when a request names none.
	Model string
	// MaxTokens is used when a request sets none (default
	// DefaultMaxTokens; the API requires a limit).
	MaxTokens int
	// Headers are added to every request (e.g. anthropic-beta).
	Headers map[string]string
	// HTTPClient defaults to one with a response-header timeout and no
	// overall timeout.
	HTTPClient *http.Client
	// HeaderTimeout bounds the wait for response headers when HTTPClient
	// is nil (default 5 minutes: local servers may load a model first).
	HeaderTimeout time.Duration
	// IdleTimeout cancels a stream that sends nothing for this long
	// (default 3 minutes); the API pings regularly.
	IdleTimeout time.Duration
	Retry       llm.RetryPolicy
	// Logger receives retry warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Provider streams Anthropic Messages. It is safe for concurrent use.
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
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages"}
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	body, err := json.Marshal(p.buildRequest(req))
	if err != nil {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}, fmt.Errorf("anthropic: encoding request: %w", err)
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
		return resp, fmt.Errorf("anthropic: %w", ctx.Err())
	}
	return resp, err
}

func (p *Provider) attempt(ctx context.Context, body []byte, s *streamState) error {
	hreq, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("Anthropic-Version", APIVersion)
	if p.cfg.APIKey != "" {
		hreq.Header.Set("X-Api-Key", p.cfg.APIKey.Reveal())
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	st, err := httpx.Open(ctx, p.cfg.HTTPClient, hreq, p.cfg.IdleTimeout, providerName, p.cfg.APIKey, parseError)
	if err != nil {
		return err
	}
	defer st.Close()
	r := sse.NewReader(st.Body)
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				if s.stopped {
					return nil
				}
				return fmt.Errorf("anthropic: %w (no message_stop)", llm.ErrTruncated)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("anthropic: %w: %w", llm.ErrTruncated, err)
			}
			return fmt.Errorf("anthropic: reading stream: %w", err)
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		done, err := s.handle(ev.Type, []byte(ev.Data))
		if err != nil || done {
			return err
		}
	}
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// parseError reads {"type": "error", "error": {"type", "message"}}.
func parseError(body []byte) (string, string) {
	var v struct {
		Error wireError `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	return v.Error.Type, v.Error.Message
}

func retryableType(t string) bool {
	switch t {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		return true
	}
	return false
}

// String describes p without its key: fmt cannot redact the key inside
// unexported fields by itself.
func (p *Provider) String() string {
	return fmt.Sprintf("anthropic.Provider{url: %s, model: %s}", p.url, p.cfg.Model)
}

// GoString is String, so %#v cannot print the key either.
func (p *Provider) GoString() string { return p.String() }
