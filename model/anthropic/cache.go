package anthropic

import (
	"encoding/json"
	"strings"
)

// Prompt caching. The API caches the prefix of a request (tools, then
// system, then messages, in that order) up to a block marked with
// cache_control, for 5 minutes after its last use; a later request whose
// prefix up to one of its own breakpoints matches reads it at a tenth of
// the input price (writing costs 1.25x). A breakpoint finds an earlier
// entry only within the 20 blocks before it, a prefix shorter than the
// model's minimum is never cached, and a request may carry at most 4
// breakpoints. placeBreakpoints marks, within those rules:
//
//  1. the end of the system prompt (or of the tools without one): the
//     part every request of a session shares, read again even after the
//     conversation was compacted;
//  2. the last block of the conversation: written for the next step;
//  3. the end of the previous request's conversation (the message before
//     the latest assistant reply), when it lies more than the lookback
//     before the last block: a step that added many blocks (a response
//     with many tool calls and their results) still reads what the
//     previous step wrote.
//
// So the breakpoints roll forward with the conversation and every step
// reads the previous step's prefix.

// cacheControl is an ephemeral (5-minute) cache breakpoint.
type cacheControl struct {
	Type string `json:"type"`
}

// maxBreakpoints is the API's limit per request.
const maxBreakpoints = 4

// lookbackBlocks is how far before a breakpoint the API looks for an
// earlier cache entry.
const lookbackBlocks = 20

// minCacheTokens is the shortest prefix the API caches for a model.
// Source: Anthropic's prompt-caching documentation, "Cache limitations"
// (Opus 4.5 and later and Haiku 4.5: 4096; Sonnet 4.6 and the Haiku 3
// models: 2048; other Sonnet and Opus models: 1024).
func minCacheTokens(model string) int {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "opus-4-5"), strings.Contains(m, "opus-4-6"), strings.Contains(m, "opus-4-7"),
		strings.Contains(m, "haiku-4"):
		return 4096
	case strings.Contains(m, "sonnet-4-6"), strings.Contains(m, "haiku"):
		return 2048
	}
	return 1024
}

// estimateTokens is a deliberately low estimate of a value's token count
// (4 bytes of JSON a token; real text runs 3 to 4): a breakpoint is left
// out only when the prefix is surely too short to cache.
func estimateTokens(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b) / 4
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// placeBreakpoints marks w's cache breakpoints (see above).
func placeBreakpoints(w *wireRequest) {
	minTokens := minCacheTokens(w.Model)
	prefix := estimateTokens(w.Tools) + estimateTokens(w.System)
	used := 0
	switch {
	case prefix < minTokens:
	case len(w.System) > 0:
		w.System[len(w.System)-1].CacheControl = ephemeral
		used++
	case len(w.Tools) > 0:
		w.Tools[len(w.Tools)-1].CacheControl = ephemeral
		used++
	}
	if len(w.Messages) == 0 {
		return
	}
	// Blocks are counted over the whole conversation; cum[i] is the
	// estimated size of the prefix through message i.
	cum := make([]int, len(w.Messages))
	blocksBefore := make([]int, len(w.Messages)+1)
	total := prefix
	for i, m := range w.Messages {
		total += estimateTokens(m.Content)
		cum[i] = total
		blocksBefore[i+1] = blocksBefore[i] + len(m.Content)
	}
	last := len(w.Messages) - 1
	if cum[last] < minTokens {
		return
	}
	if markLast(&w.Messages[last]) {
		used++
	}
	// The previous request ended with the user message before the latest
	// assistant message.
	prev := -1
	for i := last; i > 0; i-- {
		if w.Messages[i].Role == "assistant" {
			prev = i - 1
			break
		}
	}
	if prev < 0 || used >= maxBreakpoints || cum[prev] < minTokens {
		return
	}
	if blocksBefore[last+1]-blocksBefore[prev+1] >= lookbackBlocks {
		markLast(&w.Messages[prev])
	}
}

// markLast puts a breakpoint on the last block of m that can carry one
// (thinking blocks cannot); it reports whether it found one.
func markLast(m *wireMessage) bool {
	for i := len(m.Content) - 1; i >= 0; i-- {
		switch m.Content[i].Type {
		case "thinking", "redacted_thinking":
			continue
		}
		m.Content[i].CacheControl = ephemeral
		return true
	}
	return false
}
