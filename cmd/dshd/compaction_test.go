package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/internal/anthropicmock"
)

// TestCompactedSessionThroughTheBinary: a session compacted with /compact
// in one daemon is resumed by a second, whose model request continues
// from the summary rather than the old conversation, and loaded by a
// third, which replays the compaction: the real binary, the Anthropic
// provider and the emulated API, every message schema-checked.
func TestCompactedSessionThroughTheBinary(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	ctx := testContext(t)
	const goal = "Rename Frobnicate to Transmogrify (task ZX-42)"
	n := 0
	srv := anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
		if len(r.Tools) == 0 {
			text := r.Messages[len(r.Messages)-1].Text()
			if !strings.Contains(text, goal) {
				return anthropicmock.Reply{Text: "## Goal\n(lost)"}
			}
			return anthropicmock.Reply{Text: "## Goal\n" + goal + "\n## Open problems\nNone."}
		}
		n++
		return anthropicmock.Reply{Text: fmt.Sprintf("Answer %d.", n)}
	})
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	state, cwd := t.TempDir(), t.TempDir()
	args := []string{"--state-dir", state, "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--base-url", srv.URL}

	p := start(t, cwd, args...)
	sess := openSession(t, ctx, p.conn, cwd, &acp.ClientCapabilities{})
	for _, text := range []string{goal, "Also the docs.", "/compact"} {
		if resp, err := p.conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text(text)}}); err != nil || resp.StopReason != acp.StopEndTurn {
			t.Fatalf("prompt %q: %+v %v", text, resp, err)
		}
	}
	compacted := false
	for _, u := range p.client.Updates() {
		if c, ok := u.Update.Value.(*acp.ToolCallUpdate); ok && c.Status != nil && *c.Status == acp.ToolCallCompleted && strings.Contains(string(c.Meta), `"trigger":"manual"`) {
			compacted = true
		}
	}
	if !compacted {
		t.Fatal("no completed compaction shown")
	}
	if err := p.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	// Resume in a second daemon: the next request starts from the summary.
	q := start(t, cwd, args...)
	if _, err := q.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: sess.SessionID, Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	sendPrompt(t, ctx, q.conn, sess.SessionID, "And the changelog.")
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 1 || !strings.Contains(last.Messages[0].Text(), "## Goal\n"+goal) ||
		!strings.Contains(last.Messages[0].Text(), "And the changelog.") || strings.Contains(last.Messages[0].Text(), "Answer 1.") {
		t.Errorf("the resumed request does not continue from the summary: %d messages, %q", len(last.Messages), last.Messages[0].Text())
	}
	if err := q.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	q.stop(t)

	// Load in a third, with session.compaction: the compaction is replayed
	// as a completed compaction_update with its summary.
	r := start(t, cwd, args...)
	caps := &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}}}
	if _, err := r.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sess.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := false
	for _, u := range r.client.Updates() {
		if c, ok := u.Update.Value.(*acp.CompactionUpdate); ok && c.Status == acp.CompactionCompleted {
			s, _ := c.Summary.Get()
			replayed = len(s) == 1 && strings.Contains(fmt.Sprint(s[0].Value), goal)
		}
	}
	if !replayed {
		t.Error("session/load did not replay the compaction with its summary")
	}
	if err := r.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	r.stop(t)
}
