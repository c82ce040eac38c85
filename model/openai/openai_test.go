package openai

import (
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

const testKey = "sk-test-0123456789abcdef"

func newTestProvider(t *testing.T, srv *ssetest.Server, cfg Config) (*Provider, *ssetest.Sleeper) {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	cfg.Model = "test-model"
	ns := ssetest.Configure(&cfg.Transport)
	return New(cfg), ns
}

var simpleRequest = ssetest.SimpleRequest()

func data(s string) string { return "data: " + s + "\n" }

func TestStream(t *testing.T) {
	big := strings.Repeat("é", 40<<10) // 80 KiB in one data line
	tests := []struct {
		name      string
		body      string
		wantText  string
		wantThink string
		wantCalls []llm.ToolCall
		wantStop  llm.StopReason
		wantUsage llm.Usage
	}{{
		name: "text, keep-alives, usage-only final chunk",
		body: ssetest.Lines(
			": keep-alive", "",
			data(`{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`),
			data(`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`),
			": OPENROUTER PROCESSING", "",
			data(`{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`),
			data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
			data(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`),
			data(`[DONE]`)),
		wantText:  "Hello",
		wantStop:  llm.StopEndTurn,
		wantUsage: llm.Usage{Input: 6, Output: 2, CacheRead: 4},
	}, {
		name: "CRLF line ends",
		body: ssetest.CRLF(
			"data: "+`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, "",
			"data: "+`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`, "",
			"data: [DONE]", ""),
		wantText: "ab",
		wantStop: llm.StopEndTurn,
	}, {
		name: "tool calls keyed by index, arguments split",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"ls\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)),
		wantCalls: []llm.ToolCall{{ID: "call_a", Name: "read", Arguments: `{"path":"a"}`}, {ID: "call_b", Name: "bash", Arguments: `{"command":"ls"}`}},
		wantStop:  llm.StopToolUse,
	}, {
		name: "tool call deltas keyed only by id",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"name":"read","arguments":"{\"path\""}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","function":{"name":"glob","arguments":"{}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"arguments":":\"b\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)),
		wantCalls: []llm.ToolCall{{ID: "x1", Name: "read", Arguments: `{"path":"b"}`}, {ID: "x2", Name: "glob", Arguments: `{}`}},
		wantStop:  llm.StopToolUse,
	}, {
		name: "every call at index 0, told apart by id",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g1","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g2","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}}]}`),
			data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
			data(`[DONE]`)),
		wantCalls: []llm.ToolCall{{ID: "g1", Name: "read", Arguments: `{"path":"a"}`}, {ID: "g2", Name: "read", Arguments: `{"path":"b"}`}},
		wantStop:  llm.StopToolUse, // "stop" with calls still means tool use
	}, {
		name: "continuation deltas with neither index nor id, arguments as an object",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"o1","function":{"name":"write","arguments":{"path":"f"}}}]},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)),
		wantCalls: []llm.ToolCall{{ID: "o1", Name: "write", Arguments: `{"path":"f"}`}},
		wantStop:  llm.StopToolUse,
	}, {
		name: "extra_content (Gemini thought signature) is kept",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g1","type":"function","function":{"name":"read","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)),
		wantCalls: []llm.ToolCall{{ID: "g1", Name: "read", Arguments: `{}`, Extra: `{"google":{"thought_signature":"c2ln"}}`}},
		wantStop:  llm.StopToolUse,
	}, {
		name: "reasoning_content and reasoning",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}`),
			data(`{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}`),
			data(`{"choices":[{"index":0,"delta":{"reasoning":"!","reasoning_content":"!"}}]}`),
			data(`{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`),
			data(`[DONE]`)),
		wantThink: "think more!",
		wantText:  "done",
		wantStop:  llm.StopEndTurn,
	}, {
		name: "data line over 64 KiB",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"content":"`+big+`"},"finish_reason":"stop"}]}`),
			data(`[DONE]`)),
		wantText: big,
		wantStop: llm.StopEndTurn,
	}, {
		name: "finish_reason without [DONE] is complete",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}]}`)),
		wantText: "x",
		wantStop: llm.StopMaxTokens,
	}, {
		name: "content filter is a refusal",
		body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"refusal":"I can't."},"finish_reason":"content_filter"}]}`),
			data(`[DONE]`)),
		wantText: "I can't.",
		wantStop: llm.StopRefusal,
	}}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := ssetest.New(t, uint64(i), ssetest.Step{Body: tc.body})
			p, _ := newTestProvider(t, srv, Config{})
			resp := ssetest.Stream(t, p, simpleRequest)
			if got := resp.Message.Text(); got != tc.wantText {
				t.Errorf("text = %.80q, want %.80q", got, tc.wantText)
			}
			var think string
			for _, p := range resp.Message.Parts {
				if r, ok := p.(*llm.Reasoning); ok {
					think += r.Text
				}
			}
			if think != tc.wantThink {
				t.Errorf("reasoning = %q, want %q", think, tc.wantThink)
			}
			var calls []llm.ToolCall
			for _, c := range resp.Message.ToolCalls() {
				calls = append(calls, *c)
			}
			if len(calls) != len(tc.wantCalls) {
				t.Fatalf("calls = %+v, want %+v", calls, tc.wantCalls)
			}
			for i := range calls {
				if calls[i] != tc.wantCalls[i] {
					t.Errorf("call %d = %+v, want %+v", i, calls[i], tc.wantCalls[i])
				}
			}
			if resp.StopReason != tc.wantStop {
				t.Errorf("stop = %q, want %q", resp.StopReason, tc.wantStop)
			}
			if resp.Usage != tc.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tc.wantUsage)
			}
		})
	}
}

func TestMissingIDsAreGenerated(t *testing.T) {
	srv := ssetest.New(t, 9, ssetest.Step{Body: ssetest.Lines(
		data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"index":1,"function":{"name":"read","arguments":""}}]}}]}`),
		data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		data(`[DONE]`))})
	p, _ := newTestProvider(t, srv, Config{})
	resp := ssetest.Stream(t, p, simpleRequest)
	calls := resp.Message.ToolCalls()
	if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Fatalf("calls = %+v, want two with distinct generated ids", calls)
	}
	if calls[1].Arguments != "{}" {
		t.Errorf("empty arguments = %q, want {}", calls[1].Arguments)
	}
}

func TestNonStreamedResponse(t *testing.T) {
	srv := ssetest.New(t, 8, ssetest.Step{Header: map[string]string{"Content-Type": "application/json"}, Body: `{
	  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Sure.",
	    "reasoning_content": "plan",
	    "tool_calls": [{"type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
	                   {"type": "function", "function": {"name": "read", "arguments": "{\"path\":\"b\"}"}}]}}],
	  "usage": {"prompt_tokens": 5, "completion_tokens": 7}}`})
	p, _ := newTestProvider(t, srv, Config{})
	resp := ssetest.Stream(t, p, simpleRequest)
	calls := resp.Message.ToolCalls()
	if resp.Message.Text() != "Sure." || len(calls) != 2 || calls[1].Arguments != `{"path":"b"}` || resp.StopReason != llm.StopToolUse || resp.Usage.Output != 7 {
		t.Fatalf("resp = %+v, calls %+v", resp, calls)
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []ssetest.ErrorCase{{
		Name:     "cut without finish marker",
		Steps:    []ssetest.Step{{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"partial"}}]}`))}},
		WantErr:  llm.ErrTruncated,
		WantReqs: 1, // text was emitted: no retry
		WantText: "partial",
	}, {
		Name:     "cut mid-line",
		Steps:    []ssetest.Step{{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"cho"}},
		WantErr:  llm.ErrTruncated,
		WantReqs: 1,
		WantText: "a",
	}, {
		Name: "mid-stream error event after output",
		Steps: []ssetest.Step{{Body: ssetest.Lines(
			data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`),
			data(`{"error":{"message":"upstream died","type":"server_error"}}`))}},
		WantAPI:  &llm.APIError{Provider: "openai", Type: "server_error", Message: "upstream died", Retryable: true},
		WantReqs: 1,
		WantText: "a",
	}, {
		Name: "mid-stream error before output is retried",
		Steps: []ssetest.Step{
			{Body: ssetest.Lines("event: error", data(`{"error":{"message":"overloaded","code":503}}`))},
			{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`), data("[DONE]"))},
		},
		WantReqs: 2,
		WantText: "ok",
	}, {
		Name: "retries honour retry-after-ms and retry-after, capped",
		Steps: []ssetest.Step{
			{Status: 503, Header: map[string]string{"Retry-After-Ms": "7"}, Body: `{"error":{"message":"busy"}}`},
			{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"error":{"message":"slow down","type":"rate_limit"}}`},
			{Status: 408, Header: map[string]string{"Retry-After": "600"}},
			{Status: 409},
			{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`), data("[DONE]"))},
		},
		WantReqs:   5,
		WantText:   "ok",
		WantDelays: []time.Duration{7 * time.Millisecond, 2 * time.Second, 30 * time.Second, -1},
	}, {
		Name:     "connection dropped, then success",
		Steps:    []ssetest.Step{{Drop: true}, {Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`), data("[DONE]"))}},
		WantReqs: 2,
		WantText: "ok",
	}, {
		Name:     "401 is not retried and the key does not leak",
		Steps:    []ssetest.Step{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","code":"invalid_api_key"}}`}},
		WantAPI:  &llm.APIError{Provider: "openai", StatusCode: 401, Type: "invalid_request_error", Message: "Incorrect API key provided: [redacted]"},
		WantReqs: 1,
	}, {
		Name:     "400 is not retried",
		Steps:    []ssetest.Step{{Status: 400, Body: `{"error":"bad request from llama.cpp"}`}},
		WantAPI:  &llm.APIError{Provider: "openai", StatusCode: 400, Message: "bad request from llama.cpp"},
		WantReqs: 1,
	}, {
		Name:     "retries run out",
		Steps:    []ssetest.Step{{Status: 500, Body: "oops"}},
		WantAPI:  &llm.APIError{Provider: "openai", StatusCode: 500, Message: "oops", Retryable: true},
		WantReqs: 5,
	}}
	ssetest.RunErrorCases(t, tests, testKey, func(t *testing.T, srv *ssetest.Server, log *slog.Logger) (llm.Provider, *ssetest.Sleeper) {
		return newTestProvider(t, srv, Config{Transport: Transport{Logger: log}})
	}, func(t *testing.T, srv *ssetest.Server) {
		for _, r := range srv.Requests() {
			if r.Header.Get("Authorization") != "Bearer "+testKey {
				t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
			}
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	srv := ssetest.New(t, 3, ssetest.Step{Hang: true, Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"first"}}]}`))})
	p, _ := newTestProvider(t, srv, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := ssetest.Collector{OnEvent: func(llm.Event) { cancel() }}
	resp, err := p.Stream(ctx, simpleRequest, c.Emit)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if resp.StopReason != llm.StopCancelled || resp.Message.Text() != "first" {
		t.Fatalf("resp = %+v, want cancelled with the partial text", resp)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestHeaderTimeoutAndCancelBeforeHeaders(t *testing.T) {
	t.Run("header timeout is a retryable connection error", func(t *testing.T) {
		srv := ssetest.New(t, 10, ssetest.Step{Stall: true}, ssetest.Step{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`), data("[DONE]"))})
		p, _ := newTestProvider(t, srv, Config{Transport: Transport{HeaderTimeout: 50 * time.Millisecond}})
		resp, err := p.Stream(t.Context(), simpleRequest, nil)
		// At least two requests: the stalled one, then the answer. On a
		// loaded machine the answer itself may miss the 50 ms and be
		// retried once more, which is the same behaviour again.
		if err != nil || resp.Message.Text() != "ok" || len(srv.Requests()) < 2 {
			t.Fatalf("err %v, text %q after %d requests", err, resp.Message.Text(), len(srv.Requests()))
		}
	})
	t.Run("cancel while waiting for headers", func(t *testing.T) {
		reached := make(chan struct{})
		srv := ssetest.New(t, 11, ssetest.Step{Stall: true, Reached: reached})
		p, _ := newTestProvider(t, srv, Config{})
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-reached // the request is in flight, its headers will not come
			cancel()
		}()
		resp, err := p.Stream(ctx, simpleRequest, nil)
		if !errors.Is(err, context.Canceled) || resp.StopReason != llm.StopCancelled {
			t.Fatalf("err = %v, stop = %q", err, resp.StopReason)
		}
	})
}

func TestIdleWatchdog(t *testing.T) {
	ok := ssetest.Step{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`), data("[DONE]"))}
	t.Run("after output: error", func(t *testing.T) {
		srv := ssetest.New(t, 4, ssetest.Step{Hang: true, Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`))}, ok)
		p, _ := newTestProvider(t, srv, Config{Transport: Transport{IdleTimeout: 50 * time.Millisecond}})
		resp, err := p.Stream(t.Context(), simpleRequest, nil)
		if !errors.Is(err, llm.ErrIdleTimeout) {
			t.Fatalf("err = %v, want ErrIdleTimeout", err)
		}
		if resp.Message.Text() != "a" || len(srv.Requests()) != 1 {
			t.Fatalf("text %q after %d requests", resp.Message.Text(), len(srv.Requests()))
		}
	})
	t.Run("before output: retried", func(t *testing.T) {
		srv := ssetest.New(t, 5, ssetest.Step{Hang: true, Body: ": ping\n\n"}, ok)
		p, _ := newTestProvider(t, srv, Config{Transport: Transport{IdleTimeout: 50 * time.Millisecond}})
		resp, err := p.Stream(t.Context(), simpleRequest, nil)
		// At least two: on a loaded machine the answer may miss the 50 ms
		// too and be retried once more, which is the same behaviour.
		if err != nil || resp.Message.Text() != "ok" || len(srv.Requests()) < 2 {
			t.Fatalf("err %v, text %q after %d requests", err, resp.Message.Text(), len(srv.Requests()))
		}
	})
}

func TestRequestGolden(t *testing.T) {
	srv := ssetest.New(t, 6, ssetest.Step{Body: ssetest.Lines(data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), data("[DONE]"))})
	p, _ := newTestProvider(t, srv, Config{MaxTokens: 1000, Headers: map[string]string{"HTTP-Referer": "https://example.com"}})
	if _, err := p.Stream(t.Context(), fullRequest(), nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("HTTP-Referer") != "https://example.com" {
		t.Errorf("extra header missing: %v", r.Header)
	}
	ssetest.CompareGolden(t, "request.golden.json", r.Body, *update)
}

func fullRequest() *llm.Request {
	return &llm.Request{
		System: "You are dshd.",
		Tools: []llm.ToolSchema{
			{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "noargs"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Look at this"}, &llm.Image{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				&llm.Reasoning{Text: "hmm", Provider: "openai"},
				&llm.Text{Text: "Reading."},
				&llm.ToolCall{ID: "call_1", Name: "read", Arguments: `{"path":"a.go"}`, Extra: `{"google":{"thought_signature":"c2ln"}}`},
				&llm.ToolCall{ID: "call_2", Name: "read", Arguments: `{"path": 1`},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				&llm.ToolResult{CallID: "call_1", Name: "read", Content: []llm.Part{&llm.Text{Text: "package a"}, &llm.Image{MIMEType: "image/gif", Data: []byte("GIF")}}},
				&llm.ToolResult{CallID: "call_2", Name: "read", IsError: true, Content: []llm.Part{&llm.Text{Text: "invalid JSON arguments"}}},
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "Done."}}},
			{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "thanks"}}},
		},
	}
}
