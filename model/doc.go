// Package model is dshd's built-in agent side: the loop that drives a
// language model through the bridge, and its providers.
//
// The provider half lives in subpackages that do not depend on the bridge:
//
//   - [github.com/dsh-tools/dshd/model/llm]: the provider-neutral request,
//     message, event and response types and the [llm.Provider] interface.
//   - [github.com/dsh-tools/dshd/model/openai]: OpenAI Chat Completions
//     streaming (OpenAI, OpenRouter, Ollama /v1, llama.cpp, vLLM, LM Studio).
//   - [github.com/dsh-tools/dshd/model/anthropic]: Anthropic Messages
//     streaming, with thinking blocks sent back unchanged.
//   - [github.com/dsh-tools/dshd/model/script]: the scripted model, including
//     the embedded demo script used when no provider is configured.
//   - [github.com/dsh-tools/dshd/model/providers]: builds one of the above
//     from the daemon's flags and environment.
//
// Shared plumbing (the SSE reader, retries, the idle-read watchdog) is in
// model/internal and is not part of the API.
package model
