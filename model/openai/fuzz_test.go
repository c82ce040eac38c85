package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/internal/ssetest"
	"github.com/dsh-tools/dshd/model/llm"
)

// streamSeeds are chunk sequences, one data payload a line, taken from the
// stream tests: split arguments, calls keyed by index, by id only, all at
// index 0, arguments as an object, reasoning under both names, refusals,
// errors as events and as fields.
var streamSeeds = []string{
	`{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}
{"choices":[{"index":0,"delta":{"content":"Hel"}}]}
{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}
[DONE]`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"ls\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
[DONE]`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"name":"read","arguments":"{\"path\""}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","function":{"name":"glob","arguments":"{}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"arguments":":\"b\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g1","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g2","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"o1","function":{"name":"write","arguments":{"path":"f"}}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g1","type":"function","function":{"name":"read","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"index":1,"function":{"name":"read","arguments":""}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	// Arguments before the name, continuations with neither index nor id.
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{\"a\""}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"late"}}]}}]}
{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"  "}}]}}]}
{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	// A call that never gets a name.
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}
{"choices":[{"index":0,"delta":{"reasoning":"more"}}]}
{"choices":[{"index":0,"delta":{"reasoning":"!","reasoning_content":"!"}}]}
{"choices":[{"index":1,"delta":{"content":"stray"}}]}
{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"I can't."},"finish_reason":"content_filter"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]}
{"error":{"message":"upstream died","type":"server_error"}}`,
	`{"error":{"message":"overloaded","code":503}}`,
	`{"error":"bad request from llama.cpp"}`,
	`{"error":null,"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}]}`,
	`{"cho`,
	`[1,2]`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"n","function":{"name":"neg","arguments":null}}]}}]}`,
}

// FuzzStreamChunks feeds chunk sequences to a stream's state as the SSE
// loop does (one data payload a line, "[DONE]" ends it; errorLine is
// delivered as an "error" event) and checks that the state never panics,
// that a failing chunk yields an error (a decoding error or an
// *llm.APIError), that the emitted events agree with the response, and
// that no argument text is lost or duplicated: each finished call's
// arguments are exactly its deltas, and all calls' arguments together hold
// exactly the argument text of the chunks.
func FuzzStreamChunks(f *testing.F) {
	for i, s := range streamSeeds {
		f.Add(s, uint8(255))
		f.Add(s, uint8(i%4))
	}
	f.Fuzz(func(t *testing.T, stream string, errorLine uint8) {
		var c ssetest.Collector
		s := newStreamState(c.Emit)
		var wantArgs []string // argument text of each tool delta, per a reference decoding
		var handled int       // bytes of the chunks handled
		var err error
		done := false
		for n, line := range strings.Split(stream, "\n") {
			data := strings.TrimSpace(line)
			if data == "[DONE]" {
				done = true
				break
			}
			if data == "" {
				continue
			}
			typ := ""
			if n == int(errorLine) {
				typ = "error"
			}
			if err = s.handle(typ, []byte(data)); err != nil {
				break
			}
			handled += len(data)
			wantArgs = append(wantArgs, referenceArguments(t, data)...)
		}
		if err != nil {
			var api *llm.APIError
			var syntax *json.SyntaxError
			var typeErr *json.UnmarshalTypeError
			if !errors.As(err, &api) && !errors.As(err, &syntax) && !errors.As(err, &typeErr) {
				t.Fatalf("handle returned %T %v, want a decoding error or an *llm.APIError", err, err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
		} else if done || s.finished {
			if err := s.finish(); err != nil {
				t.Fatalf("finish: %v", err)
			}
		}
		resp := s.Response()
		c.Check(t, resp)

		// Strictly: a finished call's arguments are its deltas ("{}" only
		// in place of blank ones).
		deltas := map[int]string{}
		for _, e := range c.Events {
			switch e := e.(type) {
			case llm.ToolCallDelta:
				deltas[e.Index] += e.Delta
			case llm.ToolCallFinished:
				got, want := e.Call.Arguments, deltas[e.Index]
				if got != want && !(got == "{}" && strings.TrimSpace(want) == "") {
					t.Errorf("call %d: arguments %q, deltas %q", e.Index, got, want)
				}
			}
		}
		// No argument text lost or duplicated between the chunks and the
		// calls, whatever way they were keyed.
		total := 0
		for _, a := range wantArgs {
			total += len(a)
		}
		accumulated := 0
		for _, call := range s.calls {
			accumulated += call.args.Len()
		}
		if accumulated != total {
			t.Errorf("calls hold %d bytes of arguments, the chunks %d", accumulated, total)
		}
		if len(s.calls) > len(wantArgs) {
			t.Errorf("%d calls from %d tool deltas", len(s.calls), len(wantArgs))
		}
		if n := len(resp.Message.Text()); n > handled {
			t.Errorf("%d bytes of text from %d bytes of chunks", n, handled)
		}
	})
}

// referenceArguments decodes a chunk the adapter accepted, independently
// of it, and returns the argument text of each tool delta of choice 0: a
// JSON string's value, or any other JSON value's text.
func referenceArguments(t *testing.T, data string) []string {
	var c struct {
		Error   json.RawMessage `json:"error"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				ToolCalls []struct {
					Function struct {
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("the adapter accepted a chunk the reference cannot decode: %v", err)
	}
	var out []string
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		for _, tc := range ch.Delta.ToolCalls {
			raw := tc.Function.Arguments
			var text string
			if json.Unmarshal(raw, &text) != nil && len(raw) > 0 && string(raw) != "null" {
				text = string(raw) // not a string: the value's JSON text
			}
			out = append(out, text)
		}
	}
	return out
}

// FuzzWholeResponse feeds a body to the handling of a non-streamed
// completion: it never panics, returns an error or a complete response, and
// its events agree with the response.
func FuzzWholeResponse(f *testing.F) {
	f.Add(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Sure.","reasoning_content":"plan","tool_calls":[{"type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}}],"usage":{"prompt_tokens":5,"completion_tokens":7}}`)
	f.Add(`{"choices":[{"index":0,"finish_reason":"stop","message":{"content":"hi"}}]}`)
	f.Add(`{"choices":[{"index":0,"message":{"content":"no finish"}}]}`)
	f.Add(`{"choices":[{"index":1,"finish_reason":"stop","message":{"content":"x"}},{"index":0,"finish_reason":"stop","message":{"refusal":"no"}}]}`)
	f.Add(`{"error":{"message":"bad","type":"invalid_request_error"}}`)
	f.Add(`{"error":"text"}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, body string) {
		var c ssetest.Collector
		s := newStreamState(c.Emit)
		err := s.whole(strings.NewReader(body))
		if err == nil && !s.done {
			t.Fatal("whole succeeded without completing the response")
		}
		if err != nil && s.done {
			t.Fatalf("whole completed the response and failed: %v", err)
		}
		c.Check(t, s.Response())
	})
}
