package catalog_test

import (
	"math"
	"testing"

	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		entry  string
		window int
		priced bool
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", 200_000, true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200_000, true},
		{"anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", 200_000, true},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", 200_000, true},
		{"claude-opus-4-1-20250805", "claude-opus-4-1", 200_000, true},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 128_000, true},
		{"gpt-4o", "gpt-4o", 128_000, true},
		{"openai/gpt-4.1", "gpt-4.1", 1_047_576, true},
		{"gpt-5-mini", "gpt-5-mini", 400_000, true},
		{"gemini-2.5-flash-lite", "gemini-2.5-flash-lite", 1_048_576, true},
		{"qwen2.5-coder:32b", "qwen2.5-coder", 32_768, false},
		{"llama3.1:latest", "llama3.1", 131_072, false},
		{"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", 131_072, false},
	} {
		m, ok := catalog.Lookup(tc.name)
		if !ok || m.Name != tc.entry || m.Window != tc.window || (m.Pricing != nil) != tc.priced {
			t.Errorf("Lookup(%q) = %+v, %v; want %s, %d, priced %v", tc.name, m, ok, tc.entry, tc.window, tc.priced)
		}
	}
	for _, name := range []string{"", "gpt-4omni", "my-finetune", "claude"} {
		if m, ok := catalog.Lookup(name); ok {
			t.Errorf("Lookup(%q) = %+v", name, m)
		}
	}
}

func TestCost(t *testing.T) {
	m, _ := catalog.Lookup("claude-sonnet-4-5")
	got := m.Pricing.Cost(llm.Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 400_000})
	if want := 3 + 1.5 + 0.6 + 1.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
}
