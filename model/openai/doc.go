// Package openai is the [llm.Provider] for the OpenAI Chat Completions API
// with streaming (server-sent events), written on net/http. It serves
// OpenAI, OpenRouter, Ollama's /v1, llama.cpp, vLLM and LM Studio, and
// tolerates what those servers actually send: tool-call deltas keyed by
// index or only by id, whole calls in one delta, missing ids, reasoning as
// `reasoning_content` or `reasoning`, a usage-only final chunk, keep-alive
// comments, CRLF, very long data lines and error events mid-stream. A
// stream that ends with neither a finish reason nor [DONE] is an error
// wrapping [llm.ErrTruncated].
package openai
