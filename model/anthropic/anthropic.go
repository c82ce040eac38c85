package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/model/internal/httpx"
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
	// NoCache leaves out the prompt-cache breakpoints (see the package
	// documentation); for gateways that reject cache_control.
	NoCache bool
	// Headers are added to every request (e.g. anthropic-beta).
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
	cfg.Transport = httpx.WithDefaults(cfg.Transport)
	return &Provider{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages"}
}

// Stream implements [llm.Provider].
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	return httpx.StreamJSON(ctx, p.cfg.Transport, providerName, p.buildRequest(req), func() *streamState { return newStreamState(emit) }, p.attempt)
}

func (p *Provider) attempt(ctx context.Context, body []byte, s *streamState) error {
	header := map[string]string{"Anthropic-Version": APIVersion}
	if p.cfg.APIKey != "" {
		header["X-Api-Key"] = p.cfg.APIKey.Reveal()
	}
	st, err := httpx.OpenPost(ctx, p.cfg.Transport, httpx.Post{
		Provider: providerName, URL: p.url, Body: body, Header: header, Extra: p.cfg.Headers,
		Secret: p.cfg.APIKey, Parse: parseError,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	return httpx.ReadEvents(ctx, providerName, st.Body, func(typ, data string) (bool, error) {
		return s.handle(typ, []byte(data))
	}, func() error {
		if s.stopped {
			return nil
		}
		return fmt.Errorf("anthropic: %w (no message_stop)", llm.ErrTruncated)
	})
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
