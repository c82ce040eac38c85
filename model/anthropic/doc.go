// Package anthropic is the [llm.Provider] for the Anthropic Messages API
// with streaming (server-sent events), written on net/http.
//
// Thinking blocks keep their signatures, and redacted_thinking blocks their
// opaque data, in [llm.Reasoning] parts marked Provider "anthropic"; later
// requests send them back unchanged, as the API requires when tools are
// used with extended thinking. A stream that ends before message_stop (or
// a message_delta with a stop reason) is an error wrapping
// [llm.ErrTruncated].
package anthropic
