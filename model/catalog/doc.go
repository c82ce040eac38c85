// Package catalog knows the context window and the prices of common
// models, so the agent loop can report how full the context is and what a
// session has cost, and knows when to compact.
//
// [Lookup] finds a model by the name a provider is sent ("claude-sonnet-4-5",
// "claude-sonnet-4-5-20250929", "openai/gpt-4.1" as OpenRouter spells it,
// "qwen2.5-coder:32b" as Ollama does): the longest table entry that
// prefixes the normalised name wins. Every figure in the table names its
// source. Settings override both (model.contextWindow, model.pricing), and
// for local servers the loop asks the server itself (see
// [github.com/dsh-tools/dshd/model/llm.WindowProber]).
//
//	m, ok := catalog.Lookup("claude-sonnet-4-5")
//	cost := m.Pricing.Cost(llm.Usage{Input: 1200, Output: 300, CacheRead: 90_000})
package catalog
