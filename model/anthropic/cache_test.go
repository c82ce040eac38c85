package anthropic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/anthropicmock"
	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/llm"
)

// TestCacheBreakpointsRoll: each request reads the previous request's
// prefix from the (emulated) cache, including after a response whose many
// tool calls and results put the previous end beyond the 20-block
// lookback; thinking blocks never carry a breakpoint, prefixes below the
// minimum get none, and no request has more than 4.
func TestCacheBreakpointsRoll(t *testing.T) {
	srv := anthropicmock.New(t, func(*anthropicmock.Request) anthropicmock.Reply { return anthropicmock.Reply{Text: "ok"} })
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
	big := strings.Repeat("All work and no play makes a dull model. ", 200) // ~2,000 tokens
	tools := []llm.ToolSchema{{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object"}`)}}
	msgs := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: big}}}}
	send := func() {
		t.Helper()
		req := &llm.Request{System: "You are a test.", Tools: tools, Messages: msgs}
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	send()
	// A response with 12 calls and their 12 results: 25 new blocks.
	var calls, results []llm.Part
	calls = append(calls, &llm.Reasoning{Text: "plan", Signature: "sig", Provider: "anthropic"})
	for i := range 12 {
		id := fmt.Sprint("c", i)
		calls = append(calls, &llm.ToolCall{ID: id, Name: "read", Arguments: `{"path":"f"}`})
		results = append(results, &llm.ToolResult{CallID: id, Content: []llm.Part{&llm.Text{Text: "contents of f"}}})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: calls}, llm.Message{Role: llm.RoleUser, Parts: results})
	send()
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "done"}}},
		llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "thanks"}}})
	send()

	us, reqs := srv.Usages(), srv.Requests()
	if us[0].CacheWrite != us[0].Prompt() {
		t.Errorf("first request wrote %d of %d tokens", us[0].CacheWrite, us[0].Prompt())
	}
	for i := 1; i < len(us); i++ {
		if us[i].CacheRead != us[i-1].Prompt() || us[i].Input != 0 {
			t.Errorf("request %d: read %d, want the previous prompt's %d; %d uncached", i+1, us[i].CacheRead, us[i-1].Prompt(), us[i].Input)
		}
	}
	for i, r := range reqs {
		if r.Breakpoints > anthropicmock.MaxBreakpoints {
			t.Errorf("request %d has %d breakpoints", i+1, r.Breakpoints)
		}
		if strings.Contains(string(r.Body), `"signature":"sig","cache_control"`) {
			t.Errorf("request %d marks a thinking block", i+1)
		}
	}

	// A short conversation (below the 1024-token minimum) gets no
	// breakpoint at all.
	short := anthropicmock.New(t, func(*anthropicmock.Request) anthropicmock.Reply { return anthropicmock.Reply{Text: "ok"} })
	p = anthropic.New(anthropic.Config{BaseURL: short.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
	hi := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "hi"}}}}
	if _, err := p.Stream(context.Background(), &llm.Request{System: "s", Tools: tools, Messages: hi}, nil); err != nil {
		t.Fatal(err)
	}
	if n := short.Requests()[0].Breakpoints; n != 0 {
		t.Errorf("short request has %d breakpoints", n)
	}
}
