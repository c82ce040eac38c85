package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/dsh-tools/dshd/model/internal/ssetest"
	"github.com/dsh-tools/dshd/model/llm"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the whole error text
	}{
		{"syntax error", "{\"turns\": [\n  {\"responses\": [}\n]}", "script:2:18: invalid JSON: invalid character '}' looking for beginning of value"},
		{"truncated", "{\"turns\": [", "script:1:12: invalid JSON: unexpected end of input"},
		{"unknown field", "{\"turns\": [{\"responses\": [{\"txt\": \"hi\"}]}]}", `script:1:28: unknown field "txt" (known fields: turns; match, responses; delayMs, thought, text, toolCalls, usage, stopReason; id, name, arguments, rawArguments; input, output)`},
		{"wrong type", "{\"turns\": [{\"responses\": [{\"delayMs\": \"5\"}]}]}", "script:1:41: turns.responses.delayMs: expected int, found JSON string"},
		{"text neither string nor array", "{\"turns\": [{\"responses\": [{\"text\": 5}]}]}", "script: turns.responses.text: expected a string or an array of strings, found JSON number"},
		{"trailing data", "{\"turns\": []} {}", "script:1:15: unexpected data after the script object"},
		{"no turns", "{}", `script: missing "turns" (a script is {"turns": [...]})`},
		{"invalid regexp", `{"turns": [{"match": "(", "responses": [{}]}]}`, "script: turns[0].match: invalid regexp: error parsing regexp: missing closing ): `(`"},
		{"no responses", `{"turns": [{"responses": []}]}`, "script: turns[0].responses: a turn needs at least one response"},
		{"bad stop reason", `{"turns": [{"responses": [{"stopReason": "tool_use"}]}]}`, `script: turns[0].responses[0].stopReason: "tool_use" is not one of end_turn, max_tokens, refusal`},
		{"negative delay", `{"turns": [{"responses": [{"delayMs": -1}]}]}`, "script: turns[0].responses[0].delayMs: must not be negative"},
		{"call without name", `{"turns": [{"responses": [{"toolCalls": [{"id": "a"}]}]}]}`, "script: turns[0].responses[0].toolCalls[0].name: a tool call needs a name"},
		{"both argument forms", `{"turns": [{"responses": [{"toolCalls": [{"name": "a", "arguments": {}, "rawArguments": "{"}]}]}]}`, "script: turns[0].responses[0].toolCalls[0]: give arguments or rawArguments, not both"},
		{"duplicate ids", `{"turns": [{"responses": [{"toolCalls": [{"id": "x", "name": "a"}, {"id": "x", "name": "b"}]}]}]}`, `script: turns[0].responses[0].toolCalls[1].id: duplicate id "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *script.Error", err)
			}
			if err.Error() != tc.want {
				t.Errorf("err = %s\nwant  %s", err, tc.want)
			}
		})
	}
}

const testScript = `{"turns": [
  {"match": "(?i)^read", "responses": [
    {"thought": ["I should ", "read it."], "text": "Reading.",
     "toolCalls": [{"id": "c1", "name": "read", "arguments": {"path": "README.md"}},
                   {"name": "edit", "rawArguments": "{\"path\": 1"}],
     "usage": {"input": 120, "output": 30}},
    {"text": ["Done ", "reading."], "stopReason": "max_tokens"}]},
  {"responses": [
    {"delayMs": 1, "toolCalls": [{"id": "c2", "name": "bash", "arguments": {"command": "ls"}}]}]},
  {"responses": [{"text": "third", "stopReason": "refusal"}]}
]}`

func user(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: text}}}
}

func results(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, id := range ids {
		m.Parts = append(m.Parts, &llm.ToolResult{CallID: id, Content: []llm.Part{&llm.Text{Text: "ok"}}})
	}
	return m
}

// TestConversation plays the script the way the loop drives it: each
// response is appended to the history, tool results follow tool calls.
func TestConversation(t *testing.T) {
	s, err := Parse([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	p := New(s)
	type step struct {
		add      llm.Message // appended before the request
		wantText string
		wantStop llm.StopReason
		wantArgs []string
	}
	steps := []step{
		// "hello" skips the read turn (match does not fit) and takes turn 2.
		{add: user("hello"), wantStop: llm.StopToolUse, wantArgs: []string{`{"command":"ls"}`}},
		{add: results("c2"), wantStop: llm.StopEndTurn}, // out of responses after tool calls
		{add: user("Read the README"), wantText: "Reading.", wantStop: llm.StopToolUse, wantArgs: []string{`{"path":"README.md"}`, `{"path": 1`}},
		{add: results("c1", "script_t0_r0_c1"), wantText: "Done reading.", wantStop: llm.StopMaxTokens},
		{add: user("read again"), wantText: "third", wantStop: llm.StopRefusal}, // turn 1 is used
		{add: user("more"), wantText: ExhaustedText, wantStop: llm.StopEndTurn},
	}
	var history []llm.Message
	for i, st := range steps {
		history = append(history, st.add)
		var c ssetest.Collector
		resp, err := p.Stream(t.Context(), &llm.Request{Messages: history}, c.Emit)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		c.Check(t, resp)
		if got := resp.Message.Text(); got != st.wantText {
			t.Errorf("step %d: text %q, want %q", i, got, st.wantText)
		}
		if resp.StopReason != st.wantStop {
			t.Errorf("step %d: stop %q, want %q", i, resp.StopReason, st.wantStop)
		}
		var args []string
		for _, c := range resp.Message.ToolCalls() {
			args = append(args, c.Arguments)
		}
		if strings.Join(args, "|") != strings.Join(st.wantArgs, "|") {
			t.Errorf("step %d: arguments %q, want %q", i, args, st.wantArgs)
		}
		history = append(history, resp.Message)
	}
	// The usage and reasoning of the read turn's first response.
	resp, _ := p.Stream(t.Context(), &llm.Request{Messages: []llm.Message{user("read")}}, nil)
	if resp.Usage != (llm.Usage{Input: 120, Output: 30}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if r, ok := resp.Message.Parts[0].(*llm.Reasoning); !ok || r.Text != "I should read it." {
		t.Errorf("first part = %#v, want the thought", resp.Message.Parts[0])
	}
}

func TestDelayIsCancellable(t *testing.T) {
	s, err := Parse([]byte(`{"turns": [{"responses": [{"delayMs": 3600000, "text": "late"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// In a bubble the hour does not pass until everything is blocked:
	// the cancel lands while Stream waits out the delay.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			synctest.Wait()
			cancel()
		}()
		resp, err := New(s).Stream(ctx, &llm.Request{Messages: []llm.Message{user("hi")}}, nil)
		if !errors.Is(err, context.Canceled) || resp.StopReason != llm.StopCancelled {
			t.Fatalf("err = %v, stop = %q; want cancelled", err, resp.StopReason)
		}
	})
}

func TestDemo(t *testing.T) {
	s := Demo()
	names := map[string]bool{}
	ids := map[string]bool{}
	for _, turn := range s.Turns {
		for _, r := range turn.Responses {
			for _, c := range r.ToolCalls {
				names[c.Name] = true
				if ids[c.ID] || c.ID == "" {
					t.Errorf("demo call id %q is empty or repeated", c.ID)
				}
				ids[c.ID] = true
				var args map[string]any
				if err := json.Unmarshal(c.Arguments, &args); err != nil {
					t.Errorf("demo call %s: arguments are not an object: %v", c.ID, err)
				}
			}
		}
	}
	for _, want := range []string{"read", "write", "edit", "bash", "todo"} {
		if !names[want] {
			t.Errorf("the demo never calls %s", want)
		}
	}
	// The demo plays to the end of its first turn on any answers.
	p := New(s)
	history := []llm.Message{user("show me")}
	for range 20 {
		resp, err := p.Stream(t.Context(), &llm.Request{Messages: history}, nil)
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, resp.Message)
		if resp.StopReason != llm.StopToolUse {
			if !strings.Contains(resp.Message.Text(), "tour") {
				t.Errorf("the demo ends with %q", resp.Message.Text())
			}
			return
		}
		var ids []string
		for _, c := range resp.Message.ToolCalls() {
			ids = append(ids, c.ID)
		}
		history = append(history, results(ids...))
	}
	t.Fatal("the demo turn never ends")
}

// FuzzParse: Parse never panics, and a script it accepts survives a
// marshal/parse round trip unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testScript))
	f.Add(DemoJSON)
	f.Add([]byte(`{"turns": [{"responses": [{"text": 5}]}]}`))
	f.Add([]byte(`{"turns": [{"match": "(", "responses": [{}]}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		s2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		out2, _ := json.Marshal(s2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the script:\n%s\n%s", out, out2)
		}
	})
}

// TestDemoPromisesNoTerminal: the demo runs for clients with and without
// terminals, so it promises none ("a live terminal" was shown to clients
// that have no terminal).
func TestDemoPromisesNoTerminal(t *testing.T) {
	if bytes.Contains(bytes.ToLower(DemoJSON), []byte("live terminal")) {
		t.Error(`the demo script promises "a live terminal" to every client`)
	}
}

// TestMatchIgnoresReminders: a turn's match sees the prompt as the user
// wrote it, not the notes dshd adds to it.
func TestMatchIgnoresReminders(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"match":"^first$","responses":[{"text":"first done"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "<system-reminder>A summary.</system-reminder>"}}},
		{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "first"}, &llm.Text{Text: "<system-reminder>Session mode: Plan</system-reminder>"}}},
	}}
	resp, err := New(s).Stream(context.Background(), req, nil)
	if err != nil || resp.Message.Text() != "first done" {
		t.Fatalf("got %q, %v", resp.Message.Text(), err)
	}
}
