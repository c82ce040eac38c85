package llm

import (
	"context"
	"encoding/json"
)

// Provider streams one model response. Stream calls emit synchronously, in
// order, from the calling goroutine, and returns when the response is
// complete, failed or was cancelled.
//
// The returned *Response is never nil: on failure it holds what was
// accumulated before the failure (so the caller can keep what it already
// showed). On cancellation through ctx the error wraps ctx's error
// (errors.Is(err, context.Canceled)) and Response.StopReason is
// [StopCancelled].
//
// Adapters retry transient failures themselves, but only while nothing of
// the response has been passed to emit; once an event was emitted a failure
// is returned to the caller.
type Provider interface {
	Stream(ctx context.Context, req *Request, emit func(Event)) (*Response, error)
}

// Request is one model call.
type Request struct {
	// Model names the model; adapters fall back to their configured default
	// when empty.
	Model string
	// System is the system prompt.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools are the tools the model may call.
	Tools []ToolSchema
	// MaxTokens caps the response length; 0 means the adapter's default.
	MaxTokens int
	// ThinkingBudget asks for extended reasoning with about this many
	// tokens, where the provider supports a budget (Anthropic); 0 means
	// off. Ignored by providers without budgets.
	ThinkingBudget int
}

// ToolSchema describes one tool to the model.
type ToolSchema struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema object for the arguments.
	Parameters json.RawMessage `json:"parameters"`
}

// Role says who wrote a message.
type Role string

const (
	// RoleUser is the user's prompt or tool results going back to the model.
	RoleUser Role = "user"
	// RoleAssistant is the model's output.
	RoleAssistant Role = "assistant"
)

// Message is one entry of the conversation. User messages carry [Text],
// [Image] and [ToolResult] parts; assistant messages carry [Text],
// [Reasoning] and [ToolCall] parts. Tool results go back to the model as a
// user message whose parts are ToolResults, in the order of the calls.
type Message struct {
	Role  Role
	Parts []Part
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var s string
	for _, p := range m.Parts {
		if t, ok := p.(*Text); ok {
			s += t.Text
		}
	}
	return s
}

// ToolCalls returns the tool calls of m, in order.
func (m Message) ToolCalls() []*ToolCall {
	var calls []*ToolCall
	for _, p := range m.Parts {
		if c, ok := p.(*ToolCall); ok {
			calls = append(calls, c)
		}
	}
	return calls
}

// HasToolResults reports whether m carries tool results (and is therefore
// the continuation of a turn rather than a new prompt).
func (m Message) HasToolResults() bool {
	for _, p := range m.Parts {
		if _, ok := p.(*ToolResult); ok {
			return true
		}
	}
	return false
}

// Part is one piece of a message. It is sealed: the variants are [*Text],
// [*Image], [*Reasoning], [*ToolCall] and [*ToolResult].
type Part interface{ partType() string }

// Text is plain text.
type Text struct {
	Text string `json:"text"`
}

// Image is an inline image.
type Image struct {
	MIMEType string `json:"mimeType"`
	// Data is the raw image bytes (base64 in JSON).
	Data []byte `json:"data"`
}

// Reasoning is the model's thinking. Fields other than Text are opaque
// provider data that must be sent back verbatim in later requests to the
// same provider.
type Reasoning struct {
	Text string `json:"text,omitempty"`
	// Signature is Anthropic's thinking signature.
	Signature string `json:"signature,omitempty"`
	// Redacted is the opaque data of an Anthropic redacted_thinking block;
	// Text is then empty.
	Redacted string `json:"redacted,omitempty"`
	// Provider names the adapter that produced the part ("anthropic",
	// "openai", "script"). Adapters only send back opaque data they made.
	Provider string `json:"provider,omitempty"`
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the argument text exactly as the model produced it. It
	// is usually a JSON object but may be anything, including invalid
	// JSON: the pipeline rejects that with a result the model can correct.
	Arguments string `json:"arguments"`
	// Extra is opaque provider data attached to the call, as JSON text,
	// that must go back verbatim with it (Gemini's thought signature in
	// OpenAI-compatible "extra_content"). Empty for most providers.
	Extra string `json:"extra,omitempty"`
}

// ToolResult is the outcome of one tool call going back to the model.
type ToolResult struct {
	CallID string `json:"callId"`
	// Name is the called tool's name; some providers want it.
	Name string `json:"name,omitempty"`
	// Content is [*Text] and [*Image] parts.
	Content []Part `json:"-"`
	IsError bool   `json:"isError,omitempty"`
}

func (*Text) partType() string       { return "text" }
func (*Image) partType() string      { return "image" }
func (*Reasoning) partType() string  { return "reasoning" }
func (*ToolCall) partType() string   { return "tool_call" }
func (*ToolResult) partType() string { return "tool_result" }

// StopReason says why a response ended.
type StopReason string

const (
	// StopEndTurn: the model finished its turn.
	StopEndTurn StopReason = "end_turn"
	// StopMaxTokens: the response hit the token limit.
	StopMaxTokens StopReason = "max_tokens"
	// StopRefusal: the model (or its provider's filter) refused.
	StopRefusal StopReason = "refusal"
	// StopToolUse: the response ends with tool calls the loop must run;
	// internal, never sent to the editor.
	StopToolUse StopReason = "tool_use"
	// StopCancelled: the request was cancelled through its context.
	StopCancelled StopReason = "cancelled"
)

// Usage counts tokens of one response. Input excludes cached tokens; the
// prompt's size is Input + CacheRead + CacheWrite.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
}

// Response is a finished model response.
type Response struct {
	// Message is the accumulated assistant message.
	Message    Message
	StopReason StopReason
	Usage      Usage
	// Model is the model name the provider reported, if any.
	Model string
}
