package model_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func TestTurnStreamsTextThoughtAndUsage(t *testing.T) {
	rec := &looptest.Recorder{Provider: script.New(mustScript(t, `{"turns":[
	  {"responses":[{"thought":["Let me ","think."],"text":["Hello ","there."],"usage":{"input":100,"output":20}}]},
	  {"responses":[{"text":"Second answer."}]}]}`))}
	h := newHarness(t, harnessOptions{provider: rec, opts: model.Options{ContextWindow: 1000, Instructions: "Be brief."}})
	sid := h.newSession()
	stop, err := h.prompt(context.Background(), sid, acp.Text("hi"))
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	msg, thought := h.texts()
	if msg != "Hello there." || thought != "Let me think." {
		t.Errorf("message %q, thought %q", msg, thought)
	}
	var usage *acp.UsageUpdate
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.UsageUpdate); ok {
			usage = u
		}
	}
	if usage == nil || usage.Used != 120 || usage.Size != 1000 {
		t.Errorf("usage update = %+v, want used 120 of 1000", usage)
	}
	// The second prompt continues the conversation: the model sees the
	// first exchange, and the script plays its second turn.
	if stop, err := h.prompt(context.Background(), sid, acp.Text("again")); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("second prompt: %v %v", stop, err)
	}
	reqs := rec.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := reqs[1].Messages
	if len(second) != 3 || second[0].Text() != "hi"+model.ModeReminder(policy.ModeDefault) || second[1].Role != llm.RoleAssistant || second[1].Text() != "Hello there." || second[2].Text() != "again" {
		t.Errorf("second request's messages = %+v", second)
	}
	sys := reqs[0].System
	for _, want := range []string{h.cwd, "Be brief."} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	// The mode is told in the conversation, once, not in the system prompt.
	if strings.Contains(sys, "Session mode") || strings.Contains(second[2].Text(), "Session mode") {
		t.Errorf("mode told in the system prompt or twice:\n%s\n%+v", sys, second[2])
	}
	if len(reqs[0].Tools) != 2 || reqs[0].Tools[0].Name != "look" {
		t.Errorf("tools = %+v", reqs[0].Tools)
	}
	if msg, _ := h.texts(); !strings.HasSuffix(msg, "Second answer.") {
		t.Errorf("messages %q", msg)
	}
	h.validate()
}

func TestToolCallsRunThroughTheBridge(t *testing.T) {
	rec := &looptest.Recorder{Provider: script.New(mustScript(t, `{"turns":[{"responses":[
	  {"text":"Looking.","toolCalls":[
	     {"id":"c1","name":"look","arguments":{"path":"a"}},
	     {"id":"c2","name":"look","rawArguments":"{\"path\": 1"},
	     {"id":"c3","name":"look","arguments":{"path":7}},
	     {"id":"c4","name":"nope","arguments":{}}]},
	  {"text":"Done."}]}]}`))}
	h := newHarness(t, harnessOptions{provider: rec})
	sid := h.newSession()
	stop, err := h.prompt(context.Background(), sid, acp.Text("go"))
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	reqs := rec.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	results := looptest.ToolResults(reqs[1])
	if len(results) != 4 {
		t.Fatalf("%d results, want 4: %+v", len(results), results)
	}
	for i, want := range []struct {
		id      string
		isError bool
		text    string
	}{{"c1", false, "looked at a"}, {"c2", true, ""}, {"c3", true, ""}, {"c4", true, ""}} {
		r := results[i]
		if r.CallID != want.id || r.IsError != want.isError || !strings.Contains(looptest.ResultText(r), want.text) {
			t.Errorf("result %d = %+v (%q), want %+v", i, r, looptest.ResultText(r), want)
		}
	}
	// Every call the editor saw reached a final status.
	final := map[string]acp.ToolCallStatus{}
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.Status != nil {
			final[u.ToolCallID] = *u.Status
		}
	}
	if final["c1"] != acp.ToolCallCompleted || final["c2"] != acp.ToolCallFailed || final["c4"] != acp.ToolCallFailed {
		t.Errorf("final statuses %v", final)
	}
	h.validate()
}

func TestReadOnlyCallsRunConcurrentlyMutatingInOrder(t *testing.T) {
	tools := &testTools{gate: newGate(2)}
	prov := script.New(mustScript(t, `{"turns":[{"responses":[
	  {"toolCalls":[
	     {"id":"r1","name":"look","arguments":{"path":"a"}},
	     {"id":"r2","name":"look","arguments":{"path":"b"}},
	     {"id":"w1","name":"poke","arguments":{"path":"c"}},
	     {"id":"w2","name":"poke","arguments":{"path":"d"}}]},
	  {"text":"ok"}]}]}`))
	h := newHarness(t, harnessOptions{provider: prov, tools: tools, mode: policy.ModeBypassPermissions})
	sid := h.newSession()
	if stop, err := h.prompt(context.Background(), sid, acp.Text("go")); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	// The two looks passed a gate that opens only when both run at once;
	// the pokes ran after them, in order.
	got := tools.ran()
	if len(got) != 4 || !slices.Contains(got[:2], "look:a") || !slices.Contains(got[:2], "look:b") || got[2] != "poke:c" || got[3] != "poke:d" {
		t.Errorf("order = %v", got)
	}
}

// A response of many read-only calls runs MaxConcurrentCalls of them at
// once, not all: the gate opens only when that many run together, and no
// more ever do.
func TestReadOnlyCallsBounded(t *testing.T) {
	tools := &testTools{gate: newGate(model.MaxConcurrentCalls)}
	var calls []string
	for i := range 8 * model.MaxConcurrentCalls {
		calls = append(calls, fmt.Sprintf(`{"id":"r%d","name":"look","arguments":{"path":"p%d"}}`, i, i))
	}
	prov := script.New(mustScript(t, `{"turns":[{"responses":[{"toolCalls":[`+strings.Join(calls, ",")+`]},{"text":"ok"}]}]}`))
	h := newHarness(t, harnessOptions{provider: prov, tools: tools, mode: policy.ModeBypassPermissions})
	if stop, err := h.prompt(context.Background(), h.newSession(), acp.Text("go")); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	if got := len(tools.ran()); got != len(calls) {
		t.Errorf("%d calls ran, want %d", got, len(calls))
	}
	if p := tools.peak.Load(); p != model.MaxConcurrentCalls {
		t.Errorf("%d calls ran at once, want %d", p, model.MaxConcurrentCalls)
	}
}

// A tool that delegates (a subagent) is read-only by kind, yet its calls
// are never run alongside others: its subagent's calls may change things.
func TestDelegatingCallsRunAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, together atomic.Int32
		deleg := registry.MustDefine(registry.Spec[lookArgs]{Name: "deleg", Description: "Delegate.", Kind: presentation.KindThink},
			func(ctx context.Context, _ registry.Call, a lookArgs) (registry.Result, error) {
				running.Add(1)
				defer running.Add(-1)
				// In the bubble this sleep ends only once every other
				// goroutine is blocked: by then a call run alongside this one
				// has started.
				time.Sleep(time.Second)
				if running.Load() > 1 {
					together.Add(1)
				}
				return registry.TextResult("done " + a.Path), nil
			})
		deleg.Delegates = true
		prov := script.New(mustScript(t, `{"turns":[{"responses":[
	  {"toolCalls":[
	     {"id":"d1","name":"deleg","arguments":{"path":"a"}},
	     {"id":"d2","name":"deleg","arguments":{"path":"b"}}]},
	  {"text":"ok"}]}]}`))
		h := newHarness(t, harnessOptions{provider: prov, extra: []*registry.Definition{deleg}, mode: policy.ModeBypassPermissions})
		if stop, err := h.prompt(context.Background(), h.newSession(), acp.Text("go")); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("prompt: %v %v", stop, err)
		}
		if together.Load() != 0 {
			t.Error("two delegating calls ran at once")
		}
	})
}

func TestMaxTurnRequests(t *testing.T) {
	prov := script.New(mustScript(t, `{"turns":[{"responses":[
	  {"toolCalls":[{"id":"a","name":"look","arguments":{"path":"1"}}]},
	  {"toolCalls":[{"id":"b","name":"look","arguments":{"path":"2"}}]},
	  {"toolCalls":[{"id":"c","name":"look","arguments":{"path":"3"}}]}]}]}`))
	h := newHarness(t, harnessOptions{provider: prov, opts: model.Options{MaxTurnRequests: 2}})
	sid := h.newSession()
	stop, err := h.prompt(context.Background(), sid, acp.Text("loop"))
	if err != nil || stop != acp.StopMaxTurnRequests {
		t.Fatalf("prompt: %v %v, want max_turn_requests", stop, err)
	}
	if msg, _ := h.texts(); !strings.Contains(msg, "limit of 2 model requests") {
		t.Errorf("message %q", msg)
	}
	h.validate()
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"end_turn", "end_turn"}, {"max_tokens", "max_tokens"}, {"refusal", "refusal"}, {"", "end_turn"},
	} {
		t.Run(tc.want+"/"+tc.script, func(t *testing.T) {
			prov := script.New(mustScript(t, `{"turns":[{"responses":[{"text":"x","stopReason":"`+tc.script+`"}]}]}`))
			h := newHarness(t, harnessOptions{provider: prov})
			stop, err := h.prompt(context.Background(), h.newSession(), acp.Text("q"))
			if err != nil || string(stop) != tc.want {
				t.Fatalf("stop %q err %v, want %q", stop, err, tc.want)
			}
		})
	}
}

// failing emits some text (or none) and then fails.
type failing struct{ text string }

func (f failing) Stream(_ context.Context, _ *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	resp := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	if f.text != "" {
		emit(llm.TextDelta{Text: f.text})
		resp.Message.Parts = []llm.Part{&llm.Text{Text: f.text}}
	}
	return resp, &llm.APIError{Provider: "test", StatusCode: 500, Message: "boom"}
}

func TestModelErrorAfterOutputEndsTheTurnVisibly(t *testing.T) {
	h := newHarness(t, harnessOptions{provider: failing{text: "Partial answer"}})
	stop, err := h.prompt(context.Background(), h.newSession(), acp.Text("q"))
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("stop %q err %v, want end_turn", stop, err)
	}
	msg, _ := h.texts()
	if !strings.HasPrefix(msg, "Partial answer") || !strings.Contains(msg, "HTTP 500") {
		t.Errorf("message %q", msg)
	}
	h.validate()
}

func TestModelErrorBeforeOutputIsAJSONRPCError(t *testing.T) {
	h := newHarness(t, harnessOptions{provider: failing{}})
	_, err := h.prompt(context.Background(), h.newSession(), acp.Text("q"))
	var ae *acp.Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "boom") {
		t.Fatalf("err = %v, want a JSON-RPC error naming the failure", err)
	}
	h.validate()
}

func TestCancelDuringModelRequest(t *testing.T) {
	prov := script.New(mustScript(t, `{"turns":[{"responses":[{"delayMs":600000,"text":"never"}]}]}`))
	rec := &looptest.Recorder{Provider: prov, Started: make(chan struct{})}
	h := newHarness(t, harnessOptions{provider: rec})
	sid := h.newSession()
	done := make(chan acp.StopReason, 1)
	go func() {
		stop, err := h.prompt(context.Background(), sid, acp.Text("wait"))
		if err != nil {
			t.Error(err)
		}
		done <- stop
	}()
	// Cancel once the model request is in flight.
	<-rec.Started
	if err := h.conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopCancelled {
		t.Errorf("stop = %q, want cancelled", stop)
	}
}

func TestLoadContinuesTheConversation(t *testing.T) {
	state := t.TempDir()
	text := `{"turns":[{"responses":[{"toolCalls":[{"id":"t1","name":"look","arguments":{"path":"x"}}]},{"text":"First."}]},
	                   {"responses":[{"text":"Second."}]}]}`
	first := newHarness(t, harnessOptions{provider: script.New(mustScript(t, text)), stateDir: state})
	sid := first.newSession()
	if _, err := first.prompt(context.Background(), sid, acp.Text("one")); err != nil {
		t.Fatal(err)
	}
	// The first daemon lets go of the session (one writer per session).
	if _, err := first.conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}

	rec := &looptest.Recorder{Provider: script.New(mustScript(t, text))}
	second := newHarness(t, harnessOptions{provider: rec, stateDir: state})
	second.cwd = first.cwd
	if _, err := second.conn.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: sid, Cwd: first.cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if _, err := second.prompt(context.Background(), sid, acp.Text("two")); err != nil {
		t.Fatal(err)
	}
	msgs := rec.Requests()[0].Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role))
	}
	// prompt, assistant (tool call), tool results, assistant, new prompt
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" || !msgs[2].HasToolResults() {
		t.Errorf("rebuilt history roles = %v", roles)
	}
	if msg, _ := second.texts(); !strings.HasSuffix(msg, "Second.") {
		t.Errorf("second daemon said %q, want the script's second turn", msg)
	}
	second.validate()
}

// flaky fails its first request after some text and records the rest.
type flaky struct {
	calls int
	last  *llm.Request
}

func (f *flaky) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	f.calls++
	if f.calls == 1 {
		emit(llm.ReasoningDelta{Text: "half a thought"})
		return failing{text: "Partial"}.Stream(ctx, req, emit)
	}
	f.last = req
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "ok"}}}, StopReason: llm.StopEndTurn}, nil
}

func TestPartialOutputIsRemembered(t *testing.T) {
	f := &flaky{}
	h := newHarness(t, harnessOptions{provider: f})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, acp.Text("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompt(context.Background(), sid, acp.Text("two")); err != nil {
		t.Fatal(err)
	}
	msgs := f.last.Messages
	if len(msgs) != 3 || msgs[1].Role != llm.RoleAssistant || len(msgs[1].Parts) != 1 || msgs[1].Text() != "Partial" {
		t.Errorf("history after a failed response = %+v", msgs)
	}
}

// TestSystemPromptStableAcrossModeChange: a mode change reaches the model
// as a reminder in the conversation; the system prompt and the tools stay
// byte for byte what they were, so the cached prefix still serves.
func TestSystemPromptStableAcrossModeChange(t *testing.T) {
	rec := &looptest.Recorder{Provider: script.New(mustScript(t, `{"turns":[
	  {"responses":[{"text":"one"}]},{"responses":[{"text":"two"}]},{"responses":[{"text":"three"}]}]}`))}
	h := newHarness(t, harnessOptions{provider: rec})
	sid := h.newSession()
	ctx := context.Background()
	for i, mode := range []policy.Mode{"", policy.ModePlan, policy.ModePlan} {
		if mode != "" {
			if _, err := h.conn.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: sid, ModeID: string(mode)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.prompt(ctx, sid, acp.Text(fmt.Sprint("p", i))); err != nil {
			t.Fatal(err)
		}
	}
	reqs := rec.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs[1:] {
		if r.System != reqs[0].System || !reflect.DeepEqual(r.Tools, reqs[0].Tools) {
			t.Errorf("prefix changed:\n%s\n---\n%s", reqs[0].System, r.System)
		}
	}
	last := reqs[2].Messages
	if got := last[2].Text(); got != "p1"+model.ModeReminder(policy.ModePlan) {
		t.Errorf("prompt after the mode change = %q", got)
	}
	if got := last[4].Text(); got != "p2" {
		t.Errorf("prompt in an unchanged mode = %q", got)
	}
}
