package model_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/internal/anthropicmock"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/policy"
)

// chat is a mock API that answers every prompt with one tool call and
// then a text, and summary requests with a summary quoting the goal.
func chat(t *testing.T, block chan struct{}) *anthropicmock.Server {
	n := 0
	var srv *anthropicmock.Server
	srv = anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
		if reply, ok := summariser(r); ok {
			if block != nil {
				close(block)
				<-r.Context.Done()
				return anthropicmock.Reply{Error: "cancelled", Status: 500}
			}
			return reply
		}
		n++
		last := r.Messages[len(r.Messages)-1]
		if strings.Contains(string(last.Blocks[0]), "tool_result") {
			return anthropicmock.Reply{Text: fmt.Sprintf("Answer %d.", n)}
		}
		return anthropicmock.Reply{ToolCalls: []anthropicmock.ToolCall{{ID: fmt.Sprintf("toolu_%d", n), Name: "read", Input: map[string]any{"path": "a.go"}}}}
	})
	return srv
}

func chatHarness(t *testing.T, srv *anthropicmock.Server, stateDir string, caps *acp.ClientSessionCapabilities) *harness {
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
	return newHarness(t, harnessOptions{provider: p, extra: workloadTools(), mode: policy.ModeBypassPermissions, stateDir: stateDir, caps: caps,
		opts: model.Options{Model: "claude-sonnet-4-5"}})
}

// lastWithTools is the last request that offered tools (not a summary).
func lastWithTools(srv *anthropicmock.Server) *anthropicmock.Request {
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if len(reqs[i].Tools) > 0 {
			return reqs[i]
		}
	}
	return nil
}

// TestCompactCommand: /compact summarises the conversation with the focus
// asked for, shows it as a "Compact conversation" think tool call to an
// editor without session.compaction, and the next prompt continues from
// the summary; resume in a new daemon continues from it too, and load
// replays the compaction.
func TestCompactCommand(t *testing.T) {
	srv := chat(t, nil)
	state := t.TempDir()
	h := chatHarness(t, srv, state, nil)
	sid := h.newSession()
	ctx := context.Background()
	if _, err := h.prompt(ctx, sid, acp.Text(goal)); err != nil {
		t.Fatal(err)
	}
	advertised := false
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.AvailableCommandsUpdate); ok {
			for _, c := range u.AvailableCommands {
				advertised = advertised || c.Name == model.CommandCompact
			}
		}
	}
	if !advertised {
		t.Error("/compact not advertised")
	}
	before := len(srv.Requests())
	if stop, err := h.prompt(ctx, sid, acp.Text("/compact the renaming")); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("/compact: %v %v", stop, err)
	}
	reqs := srv.Requests()
	if len(reqs) != before+1 || len(reqs[before].Tools) != 0 || !strings.Contains(reqs[before].Messages[0].Text(), "Pay particular attention to: the renaming") {
		t.Fatalf("/compact made %d requests; the summary request: %+v", len(reqs)-before, reqs[before:])
	}
	var call *acp.ToolCall
	var final *acp.ToolCallUpdate
	for _, n := range h.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.ToolCall:
			if u.Title == bridge.CompactionTitle {
				call = u
			}
		case *acp.ToolCallUpdate:
			if call != nil && u.ToolCallID == call.ToolCallID {
				final = u
			}
		case *acp.CompactionUpdate, *acp.CompactionSummaryChunk:
			t.Errorf("compaction update sent to a client without session.compaction: %T", u)
		}
	}
	if call == nil || call.Kind != acp.ToolKindThink || final == nil || final.Status == nil || *final.Status != acp.ToolCallCompleted ||
		!strings.Contains(string(final.Meta), `"trigger":"manual"`) || !strings.Contains(string(final.Meta), `"durationMs"`) {
		t.Fatalf("compaction tool call %+v, final %+v", call, final)
	}
	if _, err := h.prompt(ctx, sid, acp.Text("Now the docs.")); err != nil {
		t.Fatal(err)
	}
	next := lastWithTools(srv)
	if first := next.Messages[0].Text(); !strings.Contains(first, "## Goal\n"+goal) || strings.Contains(next.Messages[1].Text(), goal) {
		t.Errorf("the prompt after /compact does not start from the summary: %q / %q", first, next.Messages[1].Text())
	}
	h.validate()
	if _, err := h.conn.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}

	// A new daemon resumes the session from the summary.
	h2 := chatHarness(t, srv, state, &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}})
	h2.cwd = h.cwd
	if _, err := h2.conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: h.cwd}); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.prompt(ctx, sid, acp.Text("And the changelog.")); err != nil {
		t.Fatal(err)
	}
	resumed := lastWithTools(srv)
	if !strings.Contains(resumed.Messages[0].Text(), "## Goal\n"+goal) || len(resumed.Messages) >= len(next.Messages)+4 && strings.Contains(resumed.Messages[1].Text(), goal) {
		t.Errorf("resumed session does not continue from the summary: %q", resumed.Messages[0].Text())
	}
	h2.validate()
	if _, err := h2.conn.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}

	// A third loads it, with session.compaction: the compaction is replayed
	// as a completed compaction_update with its summary.
	h3 := chatHarness(t, srv, state, &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}})
	if _, err := h3.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := false
	for _, n := range h3.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.CompactionUpdate:
			s, _ := u.Summary.Get()
			replayed = u.Status == acp.CompactionCompleted && len(s) == 1
		case *acp.ToolCall:
			if u.Title == bridge.CompactionTitle {
				t.Error("load replayed the tool-call form to a client with session.compaction")
			}
		}
	}
	if !replayed {
		t.Error("load did not replay the compaction")
	}
	h3.validate()
}

// TestCancelDuringCompaction: cancelling the turn while the summary is
// being written ends the compaction as cancelled and leaves the history as
// it was.
func TestCancelDuringCompaction(t *testing.T) {
	block := make(chan struct{})
	srv := chat(t, block)
	h := chatHarness(t, srv, t.TempDir(), &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}})
	sid := h.newSession()
	ctx := context.Background()
	if _, err := h.prompt(ctx, sid, acp.Text(goal)); err != nil {
		t.Fatal(err)
	}
	done := make(chan acp.StopReason, 1)
	go func() {
		stop, _ := h.prompt(ctx, sid, acp.Text("/compact"))
		done <- stop
	}()
	<-block
	if err := h.conn.Cancel(ctx, &acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopCancelled {
		t.Errorf("stop %s", stop)
	}
	var statuses []acp.CompactionStatus
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.CompactionUpdate); ok {
			statuses = append(statuses, u.Status)
		}
	}
	if len(statuses) != 2 || statuses[1] != acp.CompactionCancelled {
		t.Errorf("compaction updates %v", statuses)
	}
	if _, err := h.prompt(ctx, sid, acp.Text("Go on.")); err != nil {
		t.Fatal(err)
	}
	next := lastWithTools(srv)
	if len(next.Messages) != 7 || !strings.Contains(next.Messages[0].Text(), goal) || strings.Contains(string(next.Body), "compacted") {
		t.Errorf("history changed by a cancelled compaction: %d messages, first %q", len(next.Messages), next.Messages[0].Text())
	}
	h.validate()
}

// TestUsageUpdateCost: usage_update carries the whole context (cached
// tokens included) and output, the catalog's window, and the session's
// cumulative cost at the catalog's price.
func TestUsageUpdateCost(t *testing.T) {
	srv := chat(t, nil)
	h := chatHarness(t, srv, "", nil)
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, acp.Text("hello")); err != nil {
		t.Fatal(err)
	}
	var usages []*acp.UsageUpdate
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.UsageUpdate); ok {
			usages = append(usages, u)
		}
	}
	us := srv.Usages()
	if len(usages) != len(us) || len(us) != 2 {
		t.Fatalf("%d usage updates for %d responses", len(usages), len(us))
	}
	total := 0.0
	for i, u := range us {
		total += sonnet.Cost(llmUsage(u))
		got := usages[i]
		if got.Used != uint64(u.Prompt()+u.Output) || got.Size != 200_000 || got.Cost == nil || got.Cost.Currency != "USD" || !near(got.Cost.Amount, total) {
			t.Errorf("usage update %d = %+v (cost %+v), want used %d of 200000, $%v", i, got, got.Cost, u.Prompt()+u.Output, total)
		}
	}
	h.validate()
}

// probing is a provider whose server says how large its context is.
type probing struct {
	llm.Provider
	window int
	asked  int
}

func (p *probing) ProbeWindow(context.Context, string) (int, bool) {
	p.asked++
	return p.window, p.window > 0
}

// TestContextWindowSources: the setting wins; else the server's answer
// (asked once per model); else the catalog; else the default.
func TestContextWindowSources(t *testing.T) {
	for _, tc := range []struct {
		name    string
		model   string
		setting int
		server  int
		want    uint64
	}{
		{"setting", "qwen3:8b", 9000, 16384, 9000},
		{"server", "qwen3:8b", 0, 16384, 16384},
		{"catalog", "qwen3:8b", 0, 0, 32_768},
		{"priced catalog model is not probed", "gpt-4o", 0, 16384, 128_000},
		{"default", "my-finetune", 0, 0, model.DefaultContextWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &probing{Provider: script.New(mustScript(t, `{"turns":[{"responses":[{"text":"a","usage":{"input":10,"output":2}}]},{"responses":[{"text":"b","usage":{"input":20,"output":2}}]}]}`)), window: tc.server}
			h := newHarness(t, harnessOptions{provider: p, opts: model.Options{Model: tc.model, ContextWindow: tc.setting}})
			sid := h.newSession()
			for range 2 {
				if _, err := h.prompt(context.Background(), sid, acp.Text("hi")); err != nil {
					t.Fatal(err)
				}
			}
			var sizes []uint64
			for _, n := range h.client.Updates() {
				if u, ok := n.Update.Value.(*acp.UsageUpdate); ok {
					sizes = append(sizes, u.Size)
				}
			}
			if len(sizes) != 2 || sizes[0] != tc.want || sizes[1] != tc.want {
				t.Errorf("sizes %v, want %d", sizes, tc.want)
			}
			if p.asked > 1 {
				t.Errorf("server asked %d times", p.asked)
			}
		})
	}
}

// TestFailedCompactionNotRepeated: when the summary cannot be had, the
// turn does not try again before every request (each attempt would be
// shown as another failed compaction); the provider's overflow error then
// ends the turn with a visible message.
func TestFailedCompactionNotRepeated(t *testing.T) {
	n := 0
	srv := anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
		if len(r.Tools) == 0 {
			return anthropicmock.Reply{Error: "summaries are broken today"}
		}
		n++
		// Large arguments, small results: nothing to prune.
		return anthropicmock.Reply{ToolCalls: []anthropicmock.ToolCall{{ID: fmt.Sprint("toolu_", n), Name: "edit",
			Input: map[string]any{"path": "a.go", "oldText": strings.Repeat("x", 3000), "newText": "y"}}}}
	})
	srv.Window = 12_000
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
	h := newHarness(t, harnessOptions{provider: p, extra: workloadTools(), mode: policy.ModeBypassPermissions,
		opts: model.Options{ContextWindow: 12_000, MaxTurnRequests: 40}})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, acp.Text(goal)); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && strings.HasPrefix(u.ToolCallID, "compaction-") && u.Status != nil && *u.Status == acp.ToolCallFailed {
			failed++
		}
	}
	if failed == 0 || failed > 2 {
		t.Errorf("%d failed compactions shown, want the automatic one and at most one after the overflow", failed)
	}
	if msg, _ := h.texts(); !strings.Contains(msg, "⚠ The model request failed") {
		t.Errorf("reply %q", msg)
	}
	h.validate()
}
