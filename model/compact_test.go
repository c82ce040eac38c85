package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/internal/anthropicmock"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/policy"
)

// goal is the task of the long sessions; the mock model's summaries keep
// the user's request the way a model would, by quoting it.
const goal = "Rename the Frobnicate function to Transmogrify everywhere (task ZX-42)"

// summariser answers a summary request (one without tools) by quoting the
// goal line it finds in the transcript.
func summariser(r *anthropicmock.Request) (anthropicmock.Reply, bool) {
	if len(r.Tools) > 0 {
		return anthropicmock.Reply{}, false
	}
	text := r.Messages[len(r.Messages)-1].Text()
	var goalLine string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "ZX-42") {
			goalLine = strings.TrimPrefix(strings.TrimSpace(line), "User: ")
			break
		}
	}
	return anthropicmock.Reply{Text: "## Goal\n" + goalLine + "\n## Files\nsrc/file_*.go read.\n## Open problems\nNone yet."}, true
}

// longSession runs one prompt turn of steps tool-calling requests against
// the mock API with a small window.
type longSession struct {
	srv  *anthropicmock.Server
	h    *harness
	sid  string
	stop acp.StopReason
}

func runLongSession(t *testing.T, window, steps int, fail func(i int) string, caps *acp.ClientSessionCapabilities) *longSession {
	t.Helper()
	ls := &longSession{}
	calls := 0
	ls.srv = anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
		if reply, ok := summariser(r); ok {
			return reply
		}
		calls++
		if fail != nil {
			if msg := fail(calls); msg != "" {
				return anthropicmock.Reply{Error: msg}
			}
		}
		if calls > steps {
			return anthropicmock.Reply{Text: "Renamed everywhere."}
		}
		return anthropicmock.Reply{ToolCalls: []anthropicmock.ToolCall{{ID: fmt.Sprintf("toolu_%03d", calls), Name: "read",
			Input: map[string]any{"path": fmt.Sprintf("src/file_%03d.go", calls)}}}}
	})
	ls.srv.Window = window
	p := anthropic.New(anthropic.Config{BaseURL: ls.srv.URL, APIKey: "k", Model: "claude-sonnet-4-5", MaxTokens: 2048})
	ls.h = newHarness(t, harnessOptions{provider: p, extra: workloadTools(), mode: policy.ModeBypassPermissions, caps: caps,
		opts: model.Options{ContextWindow: window, MaxTokens: 2048, MaxTurnRequests: steps + 10}})
	ls.sid = ls.h.newSession()
	stop, err := ls.h.prompt(context.Background(), ls.sid, acp.Text(goal+". Read every file under src/ first."))
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	ls.stop = stop
	return ls
}

// compactions returns the compactions the editor was shown, by the
// _meta.contextCompaction of their final update, in either wire form.
func (ls *longSession) compactions() []map[string]any {
	var out []map[string]any
	for _, n := range ls.h.client.Updates() {
		var meta acp.Meta
		switch u := n.Update.Value.(type) {
		case *acp.ToolCallUpdate:
			if u.Status != nil && strings.HasPrefix(u.ToolCallID, "compaction-") {
				meta = u.Meta
			}
		case *acp.CompactionUpdate:
			if u.Status != acp.CompactionInProgress {
				meta, _ = u.Meta.Get()
			}
		}
		if meta == nil {
			continue
		}
		var m struct {
			C map[string]any `json:"contextCompaction"`
		}
		if json.Unmarshal(meta, &m) == nil && m.C != nil {
			out = append(out, m.C)
		}
	}
	return out
}

// TestLongSessionCompacts: 300 tool-calling steps with a 24,000-token
// window finish, every request fits, the conversation was compacted, and
// the model's last request still holds the task's goal, from the summary.
func TestLongSessionCompacts(t *testing.T) {
	const window, steps = 24_000, 300
	ls := runLongSession(t, window, steps, nil, nil)
	if ls.stop != acp.StopEndTurn {
		t.Fatalf("stop %s", ls.stop)
	}
	reqs := ls.srv.Requests()
	var last *anthropicmock.Request
	biggest, summaries, toolSteps := 0, 0, 0
	for _, r := range reqs {
		biggest = max(biggest, r.Tokens)
		if r.Tokens > window {
			t.Errorf("a request of %d tokens, over the %d window", r.Tokens, window)
		}
		if len(r.Tools) == 0 {
			summaries++
			continue
		}
		toolSteps++
		last = r
	}
	if toolSteps != steps+1 {
		t.Errorf("%d requests with tools, want %d", toolSteps, steps+1)
	}
	cs := ls.compactions()
	auto := 0
	for _, c := range cs {
		if c["trigger"] == bridge.CompactionAuto {
			auto++
		}
		if pre, post := c["preTokens"].(float64), c["postTokens"].(float64); post >= pre {
			t.Errorf("compaction from %v to %v tokens", pre, post)
		}
	}
	if auto == 0 || summaries == 0 {
		t.Fatalf("%d automatic compactions, %d summary requests", auto, summaries)
	}
	var lastText strings.Builder
	for _, m := range last.Messages {
		lastText.WriteString(m.Text())
	}
	if !strings.Contains(lastText.String(), "## Goal\n"+goal) {
		t.Errorf("the last request lost the goal:\n%.2000s", lastText.String())
	}
	t.Logf("%d steps, %d compactions (%d summaries), largest request %d tokens of %d", steps, len(cs), summaries, biggest, window)
	ls.h.validate()
}

// TestOverflowErrorCompactsAndRetries: a provider that answers "prompt is
// too long" once is survived by compacting and sending the request again.
func TestOverflowErrorCompactsAndRetries(t *testing.T) {
	failed := false
	ls := runLongSession(t, 200_000, 12, func(i int) string {
		if i == 8 && !failed {
			failed = true
			return "prompt is too long: 201234 tokens > 200000 maximum"
		}
		return ""
	}, &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}})
	if ls.stop != acp.StopEndTurn {
		t.Fatalf("stop %s", ls.stop)
	}
	cs := ls.compactions()
	if len(cs) != 1 || cs[0]["trigger"] != bridge.CompactionOverflow {
		t.Fatalf("compactions %v, want one after the overflow", cs)
	}
	msg, _ := ls.h.texts()
	if !strings.Contains(msg, "Renamed everywhere.") || strings.Contains(msg, "⚠") {
		t.Errorf("reply %q", msg)
	}
	// The native form: compaction_update in_progress, summary chunks, completed.
	var statuses []acp.CompactionStatus
	chunks := 0
	for _, n := range ls.h.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.CompactionUpdate:
			statuses = append(statuses, u.Status)
		case *acp.CompactionSummaryChunk:
			chunks++
		case *acp.ToolCall:
			if u.Title == bridge.CompactionTitle {
				t.Error("a compaction tool call sent to a client with session.compaction")
			}
		}
	}
	if len(statuses) != 2 || statuses[0] != acp.CompactionInProgress || statuses[1] != acp.CompactionCompleted || chunks == 0 {
		t.Errorf("compaction updates %v, %d summary chunks", statuses, chunks)
	}
	ls.h.validate()
}
