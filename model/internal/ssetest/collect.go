package ssetest

import (
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/llm"
)

// Collector records the events a provider emits and checks that they
// agree with the final response.
type Collector struct {
	Events []llm.Event
	// OnEvent, if set, runs after each event is recorded (e.g. to cancel).
	OnEvent func(llm.Event)
}

// Emit is the callback to pass to Stream.
func (c *Collector) Emit(e llm.Event) {
	c.Events = append(c.Events, e)
	if c.OnEvent != nil {
		c.OnEvent(e)
	}
}

// Text is the concatenated text deltas.
func (c *Collector) Text() string {
	var b strings.Builder
	for _, e := range c.Events {
		if d, ok := e.(llm.TextDelta); ok {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// Check verifies the adapter's accumulation: text and reasoning deltas add
// up to the message's parts; each finished call was started once, its
// deltas add up to its arguments (an empty argument string becomes "{}"),
// and it appears in the message.
func (c *Collector) Check(t testing.TB, resp *llm.Response) {
	t.Helper()
	var text, reasoning strings.Builder
	started := map[int]llm.ToolCallStarted{}
	args := map[int]*strings.Builder{}
	var finished []llm.ToolCall
	for _, e := range c.Events {
		switch e := e.(type) {
		case llm.TextDelta:
			text.WriteString(e.Text)
		case llm.ReasoningDelta:
			reasoning.WriteString(e.Text)
		case llm.ToolCallStarted:
			if _, dup := started[e.Index]; dup {
				t.Errorf("call %d started twice", e.Index)
			}
			if e.ID == "" {
				t.Errorf("call %d started without an id", e.Index)
			}
			started[e.Index] = e
			args[e.Index] = &strings.Builder{}
		case llm.ToolCallDelta:
			s, ok := started[e.Index]
			if !ok {
				t.Errorf("delta for call %d before it started", e.Index)
				continue
			}
			if s.ID != e.ID {
				t.Errorf("delta id %q, started with %q", e.ID, s.ID)
			}
			args[e.Index].WriteString(e.Delta)
		case llm.ToolCallFinished:
			s, ok := started[e.Index]
			if !ok {
				t.Errorf("call %d finished before it started", e.Index)
				continue
			}
			if s.ID != e.Call.ID || s.Name != e.Call.Name {
				t.Errorf("finished %+v, started %+v", e.Call, s)
			}
			want := args[e.Index].String()
			if strings.TrimSpace(want) == "" {
				want = e.Call.Arguments // providers may fill in "{}" or the block's input
			}
			if e.Call.Arguments != want {
				t.Errorf("call %d arguments %q, deltas add up to %q", e.Index, e.Call.Arguments, want)
			}
			finished = append(finished, e.Call)
		}
	}
	if resp == nil {
		t.Fatal("nil response")
	}
	var msgText, msgReasoning strings.Builder
	var calls []llm.ToolCall
	for _, p := range resp.Message.Parts {
		switch p := p.(type) {
		case *llm.Text:
			msgText.WriteString(p.Text)
		case *llm.Reasoning:
			msgReasoning.WriteString(p.Text)
		case *llm.ToolCall:
			calls = append(calls, *p)
		}
	}
	if text.String() != msgText.String() {
		t.Errorf("text deltas %q, message text %q", text.String(), msgText.String())
	}
	if reasoning.String() != msgReasoning.String() {
		t.Errorf("reasoning deltas %q, message reasoning %q", reasoning.String(), msgReasoning.String())
	}
	if len(calls) != len(finished) {
		t.Errorf("message has %d calls, %d finished events", len(calls), len(finished))
		return
	}
	for i := range calls {
		if calls[i] != finished[i] {
			t.Errorf("message call %d = %+v, finished %+v", i, calls[i], finished[i])
		}
	}
}

// Stream streams req from p into a Collector, fails the test when the
// stream fails, and checks the events against the response ([Collector.Check]).
func Stream(t testing.TB, p llm.Provider, req *llm.Request) *llm.Response {
	t.Helper()
	var c Collector
	resp, err := p.Stream(t.Context(), req, c.Emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	c.Check(t, resp)
	return resp
}
