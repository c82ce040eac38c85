package llm

import (
	"context"
	"errors"
	"strings"
)

// overflowPhrases are how providers say a request does not fit the
// model's context window, lower-cased. Sources, one per shape:
//
//   - Anthropic, HTTP 400 invalid_request_error: "prompt is too long:
//     208310 tokens > 200000 maximum", and "input length and `max_tokens`
//     exceed context limit: 197202 + 21333 > 200000, decrease input length
//     or `max_tokens` and try again".
//   - OpenAI, HTTP 400 code context_length_exceeded: "This model's maximum
//     context length is 128000 tokens. However, your messages resulted in
//     130000 tokens." (also vLLM, DeepSeek, OpenRouter's "This endpoint's
//     maximum context length is …"), and the Responses-era "Your input
//     exceeds the context window of this model."
//   - llama.cpp server, HTTP 400 type exceed_context_size_error: "the
//     request exceeds the available context size, try increasing it".
//   - Gemini's OpenAI-compatible endpoint: "The input token count (N)
//     exceeds the maximum number of tokens allowed (M)."
//   - Mistral: "Prompt contains N tokens … too large for model with M
//     maximum context length".
//   - LM Studio: "Trying to keep the first N tokens when context the
//     overflows" and "… is greater than the context length".
var overflowPhrases = []string{
	"prompt is too long",
	"exceed context limit",
	"context_length_exceeded",
	"maximum context length",
	"exceeds the context window",
	"exceed_context_size_error",
	"exceeds the available context size",
	"exceeds the maximum number of tokens allowed",
	"too large for model with",
	"context the overflows",
	"greater than the context length",
	"context length exceeded",
}

// IsContextOverflow reports whether err is a provider refusing a request
// because its prompt does not fit the model's context window: the signal
// to compact the conversation and try again.
func IsContextOverflow(err error) bool {
	var api *APIError
	if !errors.As(err, &api) || api.Retryable {
		return false
	}
	s := strings.ToLower(api.Type + " " + api.Message)
	for _, p := range overflowPhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// WindowProber is implemented by providers that can ask their server how
// large a model's context window is (local OpenAI-compatible servers:
// llama.cpp's /props, Ollama's /api/show). ok is false when the server
// cannot say.
type WindowProber interface {
	ProbeWindow(ctx context.Context, model string) (tokens int, ok bool)
}
