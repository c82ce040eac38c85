package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// killRounds is how many kill -9 rounds TestFaultKill9 runs.
func killRounds(t *testing.T) int {
	if s := os.Getenv("DSHD_E2E_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("DSHD_E2E_KILLS=%q: want a positive number", s)
		}
		return n
	}
	if testing.Short() {
		return 5
	}
	return 20
}

// busyTurns is a script of n identical turns, each a few model responses
// apart with reads and a plan update between them, so that a kill lands
// in model waits, tool calls and log writes alike.
func busyTurns(n int) script {
	var s script
	for range n {
		s.Turns = append(s.Turns, turn{Responses: []response{
			{Text: "looking", ToolCalls: []toolCall{
				{ID: "r1", Name: "read", Arguments: map[string]any{"path": "small.txt"}},
				{ID: "g1", Name: "glob", Arguments: map[string]any{"pattern": "*.txt"}},
			}},
			{DelayMs: 40, Text: "planning", ToolCalls: []toolCall{
				{ID: "p1", Name: "todo", Arguments: map[string]any{"todos": []any{map[string]any{"content": "check the file", "status": "in_progress"}}}},
			}},
			{DelayMs: 40, Text: "reading again", ToolCalls: calls("r", 5, "read", map[string]any{"path": "small.txt"})},
			{DelayMs: 40, Text: "turn complete"},
		}})
	}
	return s
}

// events is the comparable gist of session updates: user and agent text,
// tool call statuses.
func events(updates []acp.SessionNotification) []string {
	var out []string
	for _, n := range updates {
		switch u := n.Update.Value.(type) {
		case *acp.UserMessageChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				out = append(out, "user:"+tc.Text)
			}
		case *acp.AgentMessageChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				out = append(out, "agent:"+tc.Text)
			}
		case *acp.ToolCall:
			out = append(out, fmt.Sprintf("tool:%s:%s", u.ToolCallID, u.Status))
		case *acp.ToolCallUpdate:
			if u.Status != nil {
				out = append(out, fmt.Sprintf("tool:%s:%s", u.ToolCallID, *u.Status))
			}
		}
	}
	return out
}

// updatesOf is every session/update of sid as JSON: its kind and its
// whole content, to compare what a client received with a replay.
func updatesOf(t *testing.T, updates []acp.SessionNotification, sid string) []string {
	var out []string
	for _, n := range updates {
		if n.SessionID != sid {
			continue
		}
		b, err := json.Marshal(n.Update)
		if err != nil {
			t.Fatalf("encoding a received update: %v", err)
		}
		out = append(out, string(b))
	}
	return out
}

// missingFrom returns the first element of want that is not found, in
// order, in got ("" when want is a subsequence of got).
func missingFrom(got, want []string) (string, bool) {
	i := 0
	for _, w := range want {
		for i < len(got) && got[i] != w {
			i++
		}
		if i == len(got) {
			return w, true
		}
		i++
	}
	return "", false
}

// TestFaultKill9 kills the daemon with SIGKILL at a random point of a turn,
// again and again on the same state directory. After every kill a new
// daemon must load the session and replay every event of every turn that
// was answered before the kill (user prompts, agent text, tool call
// statuses, in order); at the end the session resumes and a turn runs to
// its end.
//
// Of a turn the kill cut short, every update the client had received
// must be replayed too, identical and in order: the bridge logs each
// update (written through) before it sends it, so only an update being
// written at the instant of the kill may be missing, and the client never
// received that one.
func TestFaultKill9(t *testing.T) {
	rounds := killRounds(t)
	f := newFixture(t, busyTurns(2*rounds+2))
	if err := os.WriteFile(filepath.Join(f.ws, "small.txt"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var sid string
	var complete []string // events of the turns answered before a kill
	// received is every update the client received in the turns, those
	// cut short by a kill included.
	var received []string
	killedMidTurn, killedUpdates := 0, 0
	for round := range rounds {
		p := f.start(t)
		c := &acptest.Client{}
		conn := p.client(t, c)
		ctx := callCtx(t, 30*time.Second)
		initialize(t, conn)
		if sid == "" {
			sid = newSession(t, conn, f.ws)
		} else {
			if _, err := conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: f.ws, MCPServers: []acp.MCPServer{}}); err != nil {
				t.Fatalf("round %d: session/load after kill -9: %v\nstderr: %s", round, err, p.stderr.String())
			}
			if miss, ok := missingFrom(events(c.Updates()), complete); ok {
				t.Fatalf("round %d: the replay lost %q of a turn answered before the kill", round, miss)
			}
			if miss, ok := missingFrom(updatesOf(t, c.Updates(), sid), received); ok {
				t.Fatalf("round %d: the replay lacks, in order, an update the client received before the kill:\n%s", round, miss)
			}
		}
		before := len(c.Updates())
		answered := make(chan error, 1)
		go func() {
			resp, err := prompt(context.Background(), conn, sid, fmt.Sprintf("round %d", round))
			if err == nil && resp.StopReason != acp.StopEndTurn {
				err = fmt.Errorf("stop reason %s", resp.StopReason)
			}
			answered <- err
		}()
		// The turn takes about 150 ms; kill anywhere in it, or just after.
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		select {
		case err := <-answered:
			// The prompt call returned: the client has read all the
			// daemon wrote before it died.
			got := updatesOf(t, c.Updates()[before:], sid)
			received = append(received, got...)
			if err == nil { // answered before the kill: its events are complete
				complete = append(complete, events(c.Updates()[before:])...)
			} else {
				killedMidTurn++
				killedUpdates += len(got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the prompt call never returned after the daemon died", round)
		}
		acptest.CheckSchema(t, c.Recorder)
	}
	t.Logf("%d rounds, %d kills landed mid-turn, after the client had received %d updates of those turns", rounds, killedMidTurn, killedUpdates)

	// Resume (no replay) and finish a turn.
	p := f.start(t)
	c := &acptest.Client{}
	conn := p.client(t, c)
	stats, base := initBaseline(t, conn)
	ctx := callCtx(t, 30*time.Second)
	if _, err := conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: sid, Cwd: f.ws}); err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	resp, err := prompt(ctx, conn, sid, "after the kills")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	for id, st := range toolStatuses(c.Updates(), sid) {
		if st != acp.ToolCallCompleted {
			t.Errorf("tool call %s ended %q", id, st)
		}
	}
	acptest.CheckSchema(t, c.Recorder)
	closeSession(t, conn, sid)
	expectBaseline(t, "resume after the kills", stats, base)
	_ = p.stdin.Close() // one daemon per session log at a time
	if !p.waitExit(5 * time.Second) {
		t.Fatal("the daemon did not exit after stdin closed")
	}
	// The last kill's turn was checked by no load yet: this one replays
	// everything, the resumed turn included.
	received = append(received, updatesOf(t, c.Updates(), sid)...)
	replay := checkLoads(t, f, sid, []string{"after the kills", "turn complete"})
	if miss, ok := missingFrom(updatesOf(t, replay.Updates(), sid), received); ok {
		t.Errorf("the final replay lacks, in order, an update the client received:\n%s", miss)
	}
}
