package llm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-tools/dshd/model/llm"
)

func TestIsContextOverflow(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "prompt is too long: 208310 tokens > 200000 maximum"}, true},
		{&llm.APIError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again"}, true},
		{&llm.APIError{Provider: "openai", StatusCode: 400, Type: "context_length_exceeded", Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages."}, true},
		{&llm.APIError{Provider: "openai", StatusCode: 400, Type: "invalid_request_error", Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}, true},
		{&llm.APIError{Provider: "openai", StatusCode: 400, Type: "exceed_context_size_error", Message: "the request exceeds the available context size, try increasing it"}, true},
		{&llm.APIError{Provider: "openai", StatusCode: 400, Message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}, true},
		{fmt.Errorf("model request failed: %w", &llm.APIError{Provider: "anthropic", Message: "prompt is too long: 5 tokens > 4 maximum"}), true},
		{&llm.APIError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "messages: roles must alternate"}, false},
		{&llm.APIError{Provider: "anthropic", StatusCode: 529, Type: "overloaded_error", Message: "Overloaded", Retryable: true}, false},
		{errors.New("prompt is too long"), false},
		{nil, false},
	} {
		if got := llm.IsContextOverflow(tc.err); got != tc.want {
			t.Errorf("IsContextOverflow(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
