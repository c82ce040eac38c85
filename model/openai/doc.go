// Package openai is the [llm.Provider] for the OpenAI Chat Completions API
// with streaming (server-sent events), written on net/http. It serves
// OpenAI, OpenRouter, Ollama's /v1, llama.cpp, vLLM and LM Studio, and
// tolerates what those servers actually send: tool-call deltas keyed by
// index or only by id, whole calls in one delta, missing ids, reasoning as
// `reasoning_content` or `reasoning`, a usage-only final chunk, keep-alive
// comments, CRLF, very long data lines and error events mid-stream. A
// stream that ends with neither a finish reason nor [DONE] is an error
// wrapping [llm.ErrTruncated].
//
// For example, against a local Ollama (ExampleNew runs this against a
// stand-in server):
//
//	p := openai.New(openai.Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3"})
//	resp, err := p.Stream(ctx, &llm.Request{
//		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Hello"}}}},
//	}, func(e llm.Event) {
//		if d, ok := e.(llm.TextDelta); ok {
//			fmt.Print(d.Text)
//		}
//	})
package openai
