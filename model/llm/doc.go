// Package llm holds the provider-neutral model interface: a [Request]
// (system prompt, history of [Message]s made of [Part]s, tool schemas) is
// streamed by a [Provider] into [Event]s delivered to a callback, and ends
// in a [Response]: the accumulated assistant [Message], a [StopReason] and
// [Usage].
//
// A provider is one method; the loop calls it once per model request:
//
//	resp, err := provider.Stream(ctx, &llm.Request{
//		System:   "You are a coding agent.",
//		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Fix the build."}}}},
//		Tools:    tools, // []llm.ToolSchema
//	}, func(e llm.Event) { /* llm.TextDelta, tool-call deltas, usage: shown as they come */ })
//	// resp.Message holds the assistant's text and tool calls; resp.StopReason why it ended.
//
// Adapters own accumulation: the caller only displays events and keeps
// the final message; it never re-assembles deltas. Provider-specific data
// that must travel back unchanged (Anthropic thinking signatures, redacted
// thinking) rides in [Reasoning] parts verbatim.
//
// The package also defines the errors callers branch on ([*APIError],
// [ErrIdleTimeout], [ErrTruncated]) and [Secret], a string that never
// prints.
package llm
