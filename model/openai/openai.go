package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/model/internal/httpx"
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
	// Transport holds the HTTP client, the header and idle timeouts, the
	// retry policy and the logger.
	Transport
}

// Transport is the network side of a [Config], shared with the other
// adapters: HTTPClient (default: a client with no overall timeout and a
// response-header timeout of HeaderTimeout, default 5 minutes),
// IdleTimeout (cancels a stream silent for this long, default 3 minutes),
// Retry (for requests that failed before anything was emitted) and Logger
// (retry warnings; default slog.Default()).
type Transport = httpx.Transport

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
	cfg.Transport = httpx.WithDefaults(cfg.Transport)
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"}
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	return httpx.StreamJSON(ctx, p.cfg.Transport, providerName, p.buildRequest(req), func() *streamState { return newStreamState(emit) }, p.attempt)
}

func (p *Provider) attempt(ctx context.Context, body []byte, s *streamState) error {
	var header map[string]string
	if p.cfg.APIKey != "" {
		header = map[string]string{"Authorization": "Bearer " + p.cfg.APIKey.Reveal()}
	}
	st, err := httpx.OpenPost(ctx, p.cfg.Transport, httpx.Post{
		Provider: providerName, URL: p.url, Body: body, Header: header, Extra: p.cfg.Headers,
		Secret: p.cfg.APIKey, Parse: parseError,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	if ct := st.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// The server ignored "stream": true and sent the whole completion.
		return s.whole(st.Body)
	}
	return httpx.ReadEvents(ctx, providerName, st.Body, func(typ, data string) (bool, error) {
		if data == "[DONE]" {
			return true, s.finish()
		}
		return false, s.handle(typ, []byte(data))
	}, func() error {
		if s.finished {
			return s.finish()
		}
		return fmt.Errorf("openai: %w (no finish_reason or [DONE])", llm.ErrTruncated)
	})
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
