package catalog

import (
	"sort"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

// Pricing is what a model costs, in US dollars per million tokens.
type Pricing struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheRead is the price of input read from the prompt cache.
	CacheRead float64 `json:"cacheRead"`
	// CacheWrite is the price of input written to the prompt cache
	// (Anthropic's 5-minute writes); providers that cache without a
	// surcharge have it equal to Input.
	CacheWrite float64 `json:"cacheWrite"`
}

// Cost is the price of one response's usage in US dollars.
func (p Pricing) Cost(u llm.Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// Model is what the catalog knows of one model.
type Model struct {
	// Name is the table entry that matched.
	Name string
	// Window is the context window in tokens (prompt and output
	// together).
	Window int
	// Pricing is nil when the price is not known (open models, which
	// cost what their host charges).
	Pricing *Pricing
}

// entry is one row of the table.
type entry struct {
	window  int
	pricing *Pricing
}

func price(in, out, read, write float64) *Pricing {
	return &Pricing{Input: in, Output: out, CacheRead: read, CacheWrite: write}
}

// table maps a normalised model-name prefix to its figures.
var table = map[string]entry{
	// Anthropic. Windows: docs.anthropic.com "Models overview" (200K for
	// every current model; Sonnet's 1M window is a beta header away).
	// Prices: anthropic.com/pricing, "Prompt caching" columns (5-minute
	// writes at 1.25x input, reads at 0.1x).
	"claude-opus-4-5":   {200_000, price(5, 25, 0.50, 6.25)},
	"claude-opus-4-1":   {200_000, price(15, 75, 1.50, 18.75)},
	"claude-opus-4":     {200_000, price(15, 75, 1.50, 18.75)},
	"claude-sonnet-4-5": {200_000, price(3, 15, 0.30, 3.75)},
	"claude-sonnet-4":   {200_000, price(3, 15, 0.30, 3.75)},
	"claude-3-7-sonnet": {200_000, price(3, 15, 0.30, 3.75)},
	"claude-3-5-sonnet": {200_000, price(3, 15, 0.30, 3.75)},
	"claude-haiku-4-5":  {200_000, price(1, 5, 0.10, 1.25)},
	"claude-3-5-haiku":  {200_000, price(0.80, 4, 0.08, 1)},
	"claude-3-haiku":    {200_000, price(0.25, 1.25, 0.03, 0.30)},

	// OpenAI. Windows: platform.openai.com/docs/models (each model's
	// page). Prices: openai.com/api/pricing ("cached input"; OpenAI
	// charges no cache writes, so CacheWrite is the input price).
	"gpt-5":        {400_000, price(1.25, 10, 0.125, 1.25)},
	"gpt-5-mini":   {400_000, price(0.25, 2, 0.025, 0.25)},
	"gpt-5-nano":   {400_000, price(0.05, 0.40, 0.005, 0.05)},
	"gpt-4.1":      {1_047_576, price(2, 8, 0.50, 2)},
	"gpt-4.1-mini": {1_047_576, price(0.40, 1.60, 0.10, 0.40)},
	"gpt-4.1-nano": {1_047_576, price(0.10, 0.40, 0.025, 0.10)},
	"gpt-4o":       {128_000, price(2.50, 10, 1.25, 2.50)},
	"gpt-4o-mini":  {128_000, price(0.15, 0.60, 0.075, 0.15)},
	"o3":           {200_000, price(2, 8, 0.50, 2)},
	"o4-mini":      {200_000, price(1.10, 4.40, 0.275, 1.10)},

	// Google. Windows: ai.google.dev/gemini-api/docs/models (1,048,576
	// input tokens). Prices: ai.google.dev/gemini-api/docs/pricing, the
	// tier for prompts up to 200K tokens, context-cache reads as
	// CacheRead.
	"gemini-2.5-pro":        {1_048_576, price(1.25, 10, 0.125, 1.25)},
	"gemini-2.5-flash":      {1_048_576, price(0.30, 2.50, 0.03, 0.30)},
	"gemini-2.5-flash-lite": {1_048_576, price(0.10, 0.40, 0.01, 0.10)},
	"gemini-2.0-flash":      {1_048_576, price(0.10, 0.40, 0.025, 0.10)},

	// Open models: the window they were trained for, from each model
	// card on huggingface.co; no price (the host sets it). A local server
	// usually runs them with a smaller context, which the loop asks it
	// for.
	"llama3.1":       {131_072, nil}, // meta-llama/Llama-3.1-8B-Instruct
	"llama-3.1":      {131_072, nil},
	"llama3.3":       {131_072, nil}, // meta-llama/Llama-3.3-70B-Instruct
	"llama-3.3":      {131_072, nil},
	"qwen2.5-coder":  {32_768, nil},  // Qwen/Qwen2.5-Coder-32B-Instruct (config.json)
	"qwen3-coder":    {262_144, nil}, // Qwen/Qwen3-Coder-480B-A35B-Instruct
	"qwen3":          {32_768, nil},  // Qwen/Qwen3-32B (native; 131,072 with YaRN)
	"deepseek-v3":    {131_072, nil}, // deepseek-ai/DeepSeek-V3
	"deepseek-r1":    {131_072, nil}, // deepseek-ai/DeepSeek-R1
	"gpt-oss":        {131_072, nil}, // openai/gpt-oss-120b and -20b
	"mistral-large":  {131_072, nil}, // mistralai/Mistral-Large-Instruct-2411
	"devstral":       {131_072, nil}, // mistralai/Devstral-Small-2505
	"codestral":      {262_144, nil}, // mistral.ai docs, Codestral 25.01
	"gemma3":         {131_072, nil}, // google/gemma-3-27b-it
	"gemma-3":        {131_072, nil},
	"kimi-k2":        {131_072, nil}, // moonshotai/Kimi-K2-Instruct
	"glm-4.5":        {131_072, nil}, // zai-org/GLM-4.5
	"deepseek-chat":  {131_072, nil}, // api-docs.deepseek.com "Models & Pricing"
	"deepseek-coder": {131_072, nil},
}

// keys are the table's names, longest first, so the most specific prefix
// matches.
var keys = func() []string {
	ks := make([]string, 0, len(table))
	for k := range table {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if len(ks[i]) != len(ks[j]) {
			return len(ks[i]) > len(ks[j])
		}
		return ks[i] < ks[j]
	})
	return ks
}()

// Lookup finds a model; ok is false when no entry matches.
func Lookup(name string) (Model, bool) {
	n := normalise(name)
	for _, k := range keys {
		if n == k || strings.HasPrefix(n, k) && boundary(n[len(k)]) {
			e := table[k]
			return Model{Name: k, Window: e.window, Pricing: e.pricing}, true
		}
	}
	return Model{}, false
}

// boundary reports whether c may follow a matched prefix: a version or
// size suffix ("-20250929", ":32b", "@latest"), not more of a name
// ("gpt-4o" must not match "gpt-4omni").
func boundary(c byte) bool {
	return c == '-' || c == ':' || c == '@' || c == '_' || c == '.' || c == '/'
}

// normalise lower-cases a name and drops a vendor prefix ("openai/",
// "anthropic/", "meta-llama/") and the "latest" tag.
func normalise(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	n = strings.TrimSuffix(n, ":latest")
	// Anthropic's older ids put the version first ("claude-3-5-sonnet"),
	// newer ones last ("claude-sonnet-4-5"), and both forms use dots on
	// some gateways ("claude-sonnet-4.5").
	if strings.HasPrefix(n, "claude") {
		n = strings.ReplaceAll(n, ".", "-")
	}
	return n
}
