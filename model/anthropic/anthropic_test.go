package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/model/internal/ssetest"
	"github.com/dsh-tools/dshd/model/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

const testKey = "sk-ant-test-0123456789"

func newTestProvider(t *testing.T, srv *ssetest.Server, cfg Config) (*Provider, *ssetest.Sleeper) {
	t.Helper()
	cfg.BaseURL = srv.URL
	cfg.APIKey = testKey
	cfg.Model = "claude-test"
	ns := ssetest.Configure(&cfg.Transport)
	return New(cfg), ns
}

var simpleRequest = ssetest.SimpleRequest()

// ev is one SSE event in the API's shape: the event line, the data line,
// the blank line.
func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

const (
	msgStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":25,"cache_read_input_tokens":100,"cache_creation_input_tokens":7,"output_tokens":1}}}`
	msgStop  = `{"type":"message_stop"}`
)

func msgDelta(stop string, out int) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + `}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestStream(t *testing.T) {
	big := strings.Repeat("ü", 40<<10)
	tests := []struct {
		name      string
		body      string
		wantParts []llm.Part
		wantStop  llm.StopReason
		wantUsage llm.Usage
	}{{
		name: "text with pings",
		body: ev("message_start", msgStart) + ev("ping", `{"type":"ping"}`) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`) +
			": keep-alive\n\n" +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
			ev("message_delta", msgDelta("end_turn", 12)) + ev("message_stop", msgStop),
		wantParts: []llm.Part{&llm.Text{Text: "Hello, world"}},
		wantStop:  llm.StopEndTurn,
		wantUsage: llm.Usage{Input: 25, Output: 12, CacheRead: 100, CacheWrite: 7},
	}, {
		name: "thinking with signature, redacted thinking, tool use",
		body: ev("message_start", msgStart) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIARgCIkB+sig=="}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":1}`) +
			ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Reading."}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":2}`) +
			ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"READ"}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"ME.md\"}"}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":3}`) +
			ev("content_block_start", `{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_2","name":"noargs","input":{}}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":4}`) +
			ev("message_delta", msgDelta("tool_use", 80)) + ev("message_stop", msgStop),
		wantParts: []llm.Part{
			&llm.Reasoning{Text: "Let me think.", Signature: "EqQBCkYIARgCIkB+sig==", Provider: "anthropic"},
			&llm.Reasoning{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4a", Provider: "anthropic"},
			&llm.Text{Text: "Reading."},
			&llm.ToolCall{ID: "toolu_1", Name: "read", Arguments: `{"path": "README.md"}`},
			&llm.ToolCall{ID: "toolu_2", Name: "noargs", Arguments: `{}`},
		},
		wantStop:  llm.StopToolUse,
		wantUsage: llm.Usage{Input: 25, Output: 80, CacheRead: 100, CacheWrite: 7},
	}, {
		name: "CRLF and a data line over 64 KiB",
		body: strings.ReplaceAll(ev("message_start", msgStart)+
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+big+`"}}`)+
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)+
			ev("message_delta", msgDelta("max_tokens", 5))+ev("message_stop", msgStop), "\n", "\r\n"),
		wantParts: []llm.Part{&llm.Text{Text: big}},
		wantStop:  llm.StopMaxTokens,
		wantUsage: llm.Usage{Input: 25, Output: 5, CacheRead: 100, CacheWrite: 7},
	}, {
		name: "refusal; message_delta is enough without message_stop",
		body: ev("message_start", msgStart) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"No."}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
			ev("message_delta", msgDelta("refusal", 2)),
		wantParts: []llm.Part{&llm.Text{Text: "No."}},
		wantStop:  llm.StopRefusal,
		wantUsage: llm.Usage{Input: 25, Output: 2, CacheRead: 100, CacheWrite: 7},
	}}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := ssetest.New(t, uint64(i), ssetest.Step{Body: tc.body})
			p, _ := newTestProvider(t, srv, Config{})
			resp := ssetest.Stream(t, p, simpleRequest)
			got, _ := json.Marshal(resp.Message.Parts)
			want, _ := json.Marshal(tc.wantParts)
			if len(resp.Message.Parts) != len(tc.wantParts) || !bytes.Equal(got, want) {
				t.Errorf("parts = %.300s\nwant    %.300s", got, want)
			}
			for i := range min(len(resp.Message.Parts), len(tc.wantParts)) {
				if g, w := resp.Message.Parts[i], tc.wantParts[i]; !samePart(g, w) {
					t.Errorf("part %d = %#v, want %#v", i, g, w)
				}
			}
			if resp.StopReason != tc.wantStop {
				t.Errorf("stop = %q, want %q", resp.StopReason, tc.wantStop)
			}
			if resp.Usage != tc.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tc.wantUsage)
			}
			h := srv.Requests()[0].Header
			if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != APIVersion {
				t.Errorf("headers = %v", h)
			}
		})
	}
}

func samePart(a, b llm.Part) bool {
	switch a := a.(type) {
	case *llm.Text:
		b, ok := b.(*llm.Text)
		return ok && *a == *b
	case *llm.Reasoning:
		b, ok := b.(*llm.Reasoning)
		return ok && *a == *b
	case *llm.ToolCall:
		b, ok := b.(*llm.ToolCall)
		return ok && *a == *b
	}
	return false
}

func TestStreamErrors(t *testing.T) {
	okBody := ev("message_start", msgStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"ok"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("message_delta", msgDelta("end_turn", 1)) + ev("message_stop", msgStop)
	partial := ev("message_start", msgStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}}`)
	tests := []ssetest.ErrorCase{{
		Name:     "cut without message_stop",
		Steps:    []ssetest.Step{{Body: partial}},
		WantErr:  llm.ErrTruncated,
		WantReqs: 1,
		WantText: "par",
	}, {
		Name:     "cut before any output is retried",
		Steps:    []ssetest.Step{{Body: ev("message_start", msgStart)}, {Body: okBody}},
		WantReqs: 2,
		WantText: "ok",
	}, {
		Name:     "overloaded error event after output",
		Steps:    []ssetest.Step{{Body: partial + ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}},
		WantAPI:  &llm.APIError{Provider: "anthropic", Type: "overloaded_error", Message: "Overloaded", Retryable: true},
		WantReqs: 1,
		WantText: "par",
	}, {
		Name: "overloaded error event before output is retried",
		Steps: []ssetest.Step{
			{Body: ev("message_start", msgStart) + ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			{Body: okBody},
		},
		WantReqs: 2,
		WantText: "ok",
	}, {
		Name: "529 and 429 with retry-after, then success",
		Steps: []ssetest.Step{
			{Status: 529, Header: map[string]string{"Retry-After-Ms": "15"}, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
			{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`},
			{Body: okBody},
		},
		WantReqs:   3,
		WantText:   "ok",
		WantDelays: []time.Duration{15 * time.Millisecond, 3 * time.Second},
	}, {
		Name:     "401 is not retried",
		Steps:    []ssetest.Step{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`}},
		WantAPI:  &llm.APIError{Provider: "anthropic", StatusCode: 401, Type: "authentication_error", Message: "invalid x-api-key [redacted]"},
		WantReqs: 1,
	}, {
		Name:     "400 is not retried",
		Steps:    []ssetest.Step{{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}`}},
		WantAPI:  &llm.APIError{Provider: "anthropic", StatusCode: 400, Type: "invalid_request_error", Message: "max_tokens: too big"},
		WantReqs: 1,
	}}
	ssetest.RunErrorCases(t, tests, testKey, func(t *testing.T, srv *ssetest.Server, log *slog.Logger) (llm.Provider, *ssetest.Sleeper) {
		return newTestProvider(t, srv, Config{Transport: Transport{Logger: log}})
	}, nil)
}

func TestCancelMidStream(t *testing.T) {
	srv := ssetest.New(t, 3, ssetest.Step{Hang: true, Body: ev("message_start", msgStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`)})
	p, _ := newTestProvider(t, srv, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := ssetest.Collector{OnEvent: func(llm.Event) { cancel() }}
	resp, err := p.Stream(ctx, simpleRequest, c.Emit)
	if !errors.Is(err, context.Canceled) || resp.StopReason != llm.StopCancelled {
		t.Fatalf("err = %v, stop = %q; want cancelled", err, resp.StopReason)
	}
	c.Check(t, resp)
}

func TestIdleWatchdog(t *testing.T) {
	srv := ssetest.New(t, 4, ssetest.Step{Hang: true, Body: ev("ping", `{"type":"ping"}`)})
	p, _ := newTestProvider(t, srv, Config{Transport: Transport{IdleTimeout: 40 * time.Millisecond, Retry: llm.RetryPolicy{MaxRetries: 1}}})
	_, err := p.Stream(t.Context(), simpleRequest, nil)
	if !errors.Is(err, llm.ErrIdleTimeout) {
		t.Fatalf("err = %v, want ErrIdleTimeout", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry: nothing was shown)", n)
	}
}

func TestRequestGolden(t *testing.T) {
	srv := ssetest.New(t, 6, ssetest.Step{Body: ev("message_delta", msgDelta("end_turn", 1)) + ev("message_stop", msgStop)})
	p, _ := newTestProvider(t, srv, Config{})
	req := &llm.Request{
		System:         "You are dshd.",
		ThinkingBudget: 10000,
		MaxTokens:      4000,
		Tools: []llm.ToolSchema{
			{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Look"}, &llm.Image{MIMEType: "image/png", Data: []byte("PNG")}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				&llm.Reasoning{Text: "Let me think.", Signature: "sig==", Provider: "anthropic"},
				&llm.Reasoning{Redacted: "opaque==", Provider: "anthropic"},
				&llm.Reasoning{Text: "from another provider", Provider: "openai"},
				&llm.Text{Text: ""},
				&llm.ToolCall{ID: "toolu_1", Name: "read", Arguments: `{"path":"a.go"}`},
				&llm.ToolCall{ID: "toolu_2", Name: "read", Arguments: `{"path": 1`},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				&llm.Text{Text: "(note after results)"},
				&llm.ToolResult{CallID: "toolu_1", Content: []llm.Part{&llm.Text{Text: "package a"}, &llm.Image{MIMEType: "image/gif", Data: []byte("GIF")}}},
				&llm.ToolResult{CallID: "toolu_2", IsError: true, Content: []llm.Part{&llm.Text{Text: "invalid JSON"}}},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "merged into the previous user message"}}},
			{Role: llm.RoleAssistant}, // empty: dropped
		},
	}
	if _, err := p.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	ssetest.CompareGolden(t, "request.golden.json", srv.Requests()[0].Body, *update)
}
