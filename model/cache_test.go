package model_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/anthropicmock"
	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// workloadTools are stand-ins for a coding agent's tools with outputs of
// realistic size: a read returns a 120-line file, a grep 20 matches, a
// command 40 lines of output.
func workloadTools() []*registry.Definition {
	type pathArgs struct {
		Path string `json:"path" desc:"The file's path, absolute or relative to the working directory."`
	}
	type grepArgs struct {
		Pattern string  `json:"pattern" desc:"A regular expression (RE2 syntax)."`
		Path    *string `json:"path,omitempty" desc:"The directory to search; default the working directory."`
	}
	type editArgs struct {
		Path    string `json:"path" desc:"The file to change."`
		OldText string `json:"oldText" desc:"The exact text to replace; it must occur once."`
		NewText string `json:"newText" desc:"The replacement."`
	}
	type writeArgs struct {
		Path    string `json:"path" desc:"The file to write."`
		Content string `json:"content" desc:"The complete new content."`
	}
	type bashArgs struct {
		Command string `json:"command" desc:"The shell command line to run in the working directory."`
	}
	file := func(path string) string {
		var b strings.Builder
		for i := range 120 {
			fmt.Fprintf(&b, "%4d\tfunc handle%d(ctx context.Context, req *Request) (*Response, error) { // %s\n", i+1, i, path)
		}
		return b.String()
	}
	lines := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, f, i)
			b.WriteByte('\n')
		}
		return b.String()
	}
	return []*registry.Definition{
		registry.MustDefine(registry.Spec[pathArgs]{Name: "read", Kind: presentation.KindRead,
			Description: "Read a text file and return its lines, numbered. Use it before changing a file; long files are returned in pages, and binary files are refused."},
			func(_ context.Context, _ registry.Call, a pathArgs) (registry.Result, error) {
				return registry.TextResult(file(a.Path)), nil
			}),
		registry.MustDefine(registry.Spec[grepArgs]{Name: "grep", Kind: presentation.KindSearch,
			Description: "Search file contents for a regular expression and return the matching lines with their paths and line numbers. Ignored and hidden files are skipped."},
			func(_ context.Context, _ registry.Call, a grepArgs) (registry.Result, error) {
				return registry.TextResult(lines(20, "internal/server/handler.go:%d: "+a.Pattern+" matched here in a line of typical length")), nil
			}),
		registry.MustDefine(registry.Spec[editArgs]{Name: "edit", Kind: presentation.KindEdit,
			Description: "Replace one exact occurrence of a text in a file with another text. The old text must occur exactly once; include enough context to make it unique."},
			func(_ context.Context, _ registry.Call, a editArgs) (registry.Result, error) {
				return registry.TextResult("Edited " + a.Path + ": 1 replacement."), nil
			}),
		registry.MustDefine(registry.Spec[writeArgs]{Name: "write", Kind: presentation.KindEdit,
			Description: "Create a file or replace its whole content. Prefer edit for changes to an existing file."},
			func(_ context.Context, _ registry.Call, a writeArgs) (registry.Result, error) {
				return registry.TextResult(fmt.Sprintf("Wrote %s (%d bytes).", a.Path, len(a.Content))), nil
			}),
		registry.MustDefine(registry.Spec[bashArgs]{Name: "bash", Kind: presentation.KindExecute,
			Description: "Run a shell command in the working directory and return its output and exit status. Commands run with a timeout; long output is truncated."},
			func(_ context.Context, _ registry.Call, a bashArgs) (registry.Result, error) {
				return registry.TextResult(lines(40, "ok  \tgithub.com/example/project/pkg%d\t0.012s")), nil
			}),
	}
}

// workloadStep is one model response of the workload: tool calls, or the
// turn's final text when there are none.
type workloadStep []anthropicmock.ToolCall

// codingWorkload is 25 model requests over 3 prompt turns (10, 8 and 7
// requests): reads, greps, edits, writes and commands, the last request of
// each turn answering in text.
func codingWorkload() [][]workloadStep {
	n := 0
	call := func(name string, input map[string]any) anthropicmock.ToolCall {
		n++
		return anthropicmock.ToolCall{ID: fmt.Sprintf("toolu_%02d", n), Name: name, Input: input}
	}
	read := func(p string) anthropicmock.ToolCall { return call("read", map[string]any{"path": p}) }
	grep := func(p string) anthropicmock.ToolCall { return call("grep", map[string]any{"pattern": p}) }
	edit := func(p string) anthropicmock.ToolCall {
		return call("edit", map[string]any{"path": p, "oldText": "return nil, err", "newText": "return nil, fmt.Errorf(\"handle: %w\", err)"})
	}
	bash := func(c string) anthropicmock.ToolCall { return call("bash", map[string]any{"command": c}) }
	write := func(p string) anthropicmock.ToolCall {
		return call("write", map[string]any{"path": p, "content": strings.Repeat("// generated test helper\n", 30)})
	}
	return [][]workloadStep{
		{{grep("func handle")}, {read("internal/server/handler.go")}, {read("internal/server/routes.go"), read("internal/server/middleware.go")},
			{grep("ErrNotFound")}, {edit("internal/server/handler.go")}, {edit("internal/server/routes.go")}, {bash("go build ./...")},
			{bash("go test ./internal/server/")}, {read("internal/server/handler_test.go")}, nil},
		{{grep("Timeout")}, {read("internal/config/config.go")}, {edit("internal/config/config.go")}, {write("internal/config/config_test.go")},
			{bash("go test ./internal/config/")}, {read("internal/config/load.go")}, {edit("internal/config/load.go")}, nil},
		{{bash("go vet ./...")}, {grep("TODO")}, {read("cmd/server/main.go")}, {edit("cmd/server/main.go")},
			{bash("go test ./...")}, {bash("git diff --stat")}, nil},
	}
}

// sonnet is Claude Sonnet 4.5's price per million tokens.
var sonnet = catalog.Pricing{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}

// workloadResult is what one run of the workload cost.
type workloadResult struct {
	requests               int
	prompt, read, written  int64
	output                 int64
	cost, costWithoutCache float64
	maxBreakpoints         int
}

func (w workloadResult) cachedFraction() float64 { return float64(w.read) / float64(w.prompt) }

// runWorkload plays the coding workload through the real loop, bridge and
// Anthropic adapter against the mock API, one emulated second per request.
func runWorkload(t testing.TB, noCache bool) workloadResult {
	turns := codingWorkload()
	var steps []workloadStep
	for _, turn := range turns {
		steps = append(steps, turn...)
	}
	var srv *anthropicmock.Server
	srv = anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
		i := len(srv.Requests()) - 1
		srv.Advance(4e9)
		if i >= len(steps) || steps[i] == nil {
			return anthropicmock.Reply{Text: "Done: the handlers wrap their errors now and the tests pass."}
		}
		return anthropicmock.Reply{Text: "Next I will look at this.", ToolCalls: steps[i]}
	})
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "claude-sonnet-4-5", NoCache: noCache})
	h := newHarness(t, harnessOptions{provider: p, extra: workloadTools(), mode: policy.ModeBypassPermissions})
	sid := h.newSession()
	prompts := []string{
		"The HTTP handlers in internal/server drop the context of their errors. Wrap every returned error with the handler's name, then build and run the tests.",
		"Now make the config loader's timeout configurable, with a test.",
		"Run vet and the whole test suite, fix what they find, and show me the diff summary.",
	}
	for _, text := range prompts {
		if stop, err := h.prompt(context.Background(), sid, acp.Text(text)); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("prompt: %v %v", stop, err)
		}
	}
	h.validate()
	var out workloadResult
	for _, r := range srv.Requests() {
		out.maxBreakpoints = max(out.maxBreakpoints, r.Breakpoints)
	}
	for i, u := range srv.Usages() {
		if testing.Verbose() {
			t.Logf("request %2d: %6d prompt tokens, %6d read, %5d written, %5d uncached; %d breakpoints", i+1, u.Prompt(), u.CacheRead, u.CacheWrite, u.Input, srv.Requests()[i].Breakpoints)
		}
		out.requests++
		out.prompt += u.Prompt()
		out.read += u.CacheRead
		out.written += u.CacheWrite
		out.output += u.Output
		out.cost += sonnet.Cost(llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite})
		out.costWithoutCache += sonnet.Cost(llm.Usage{Input: u.Prompt(), Output: u.Output})
	}
	return out
}

// TestPromptCacheWorkload: over a 25-request coding session, the rolling
// breakpoints let the emulated API serve at least 93% of the input tokens
// from its cache. Run with -v to see the figures.
func TestPromptCacheWorkload(t *testing.T) {
	with := runWorkload(t, false)
	without := runWorkload(t, true)
	if with.requests != 25 || without.requests != 25 {
		t.Fatalf("%d and %d requests, want 25", with.requests, without.requests)
	}
	t.Logf("25 requests, %d input tokens: %.1f%% read from the cache (%d written); input+output cost at Sonnet prices $%.4f, $%.4f without caching (%.2fx)",
		with.prompt, 100*with.cachedFraction(), with.written, with.cost, without.cost, with.cost/without.cost)
	if f := with.cachedFraction(); f < 0.93 {
		t.Errorf("%.1f%% of the input read from the cache, want at least 93%%", 100*f)
	}
	if without.read != 0 || without.maxBreakpoints != 0 {
		t.Errorf("NoCache run read %d tokens from the cache with %d breakpoints", without.read, without.maxBreakpoints)
	}
	if with.maxBreakpoints > anthropicmock.MaxBreakpoints {
		t.Errorf("%d breakpoints", with.maxBreakpoints)
	}
}

func llmUsage(u anthropicmock.Usage) llm.Usage {
	return llm.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// BenchmarkPromptCacheWorkload runs the 25-request coding workload against
// the emulated cache and reports the share of input tokens read from it
// and the emulated cost at Sonnet prices, with and without breakpoints.
func BenchmarkPromptCacheWorkload(b *testing.B) {
	var with, without workloadResult
	for b.Loop() {
		with = runWorkload(b, false)
		without = runWorkload(b, true)
	}
	b.ReportMetric(100*with.cachedFraction(), "cached-%")
	b.ReportMetric(with.cost, "USD")
	b.ReportMetric(without.cost, "USD-uncached")
	b.ReportMetric(with.cost/without.cost, "cost-ratio")
}
