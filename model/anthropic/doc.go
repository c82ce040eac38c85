// Package anthropic is the [llm.Provider] for the Anthropic Messages API
// with streaming (server-sent events), written on net/http.
//
// For example (APIKeyEnv names the environment variable dshd reads):
//
//	key, _ := llm.SecretFromEnv(anthropic.APIKeyEnv)
//	p := anthropic.New(anthropic.Config{APIKey: key, Model: "claude-sonnet-4-5"})
//	resp, err := p.Stream(ctx, &llm.Request{
//		System:   "You are terse.",
//		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Hello"}}}},
//	}, func(e llm.Event) { /* text deltas, tool-call deltas, usage */ })
//
// Thinking blocks keep their signatures, and redacted_thinking blocks their
// opaque data, in [llm.Reasoning] parts marked Provider "anthropic"; later
// requests send them back unchanged, as the API requires when tools are
// used with extended thinking. A stream that ends before message_stop (or
// a message_delta with a stop reason) is an error wrapping
// [llm.ErrTruncated].
package anthropic
