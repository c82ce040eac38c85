package bridge_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// slowCreate is an editor slow to create a terminal: terminal/create
// waits for proceed, then creates it whatever became of the request
// meanwhile (a cancelled request is only advisory in ACP).
type slowCreate struct {
	*acptest.FakeTerminals
	arrived chan struct{}
	proceed chan struct{}
}

func (s *slowCreate) Create(_ context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	close(s.arrived)
	<-s.proceed
	return s.FakeTerminals.Create(context.Background(), req)
}

// TestTerminalCreatedAfterCancel: when the turn is cancelled while
// terminal/create is in flight and the editor creates the terminal anyway,
// the bridge still kills and releases it.
func TestTerminalCreatedAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		terms := &slowCreate{
			FakeTerminals: &acptest.FakeTerminals{Script: map[string]acptest.FakeRun{"bash": {Hang: true}}},
			arrived:       make(chan struct{}),
			proceed:       make(chan struct{}),
		}
		loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
			turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "run", Arguments: json.RawMessage(`{"command":"sleep 100"}`)})
			return acp.StopEndTurn, nil
		})
		agent := newTestAgent(t, loop, t.TempDir())
		client := &acptest.Client{Terminals: terms}
		conn := connect(t, agent, client, acp.ClientCapabilities{Terminal: true})
		sid := newSession(t, conn, t.TempDir())

		type answer struct {
			resp *acp.PromptResponse
			err  error
		}
		answered := make(chan answer, 1)
		go func() {
			resp, err := prompt(conn, sid, "run it")
			answered <- answer{resp, err}
		}()
		<-terms.arrived
		if err := conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		// The cancelled turn does not wait for the editor.
		a := <-answered
		if a.err != nil || a.resp.StopReason != acp.StopCancelled {
			t.Fatalf("prompt: %+v %v", a.resp, a.err)
		}
		close(terms.proceed)

		// The bridge kills and releases the late terminal in the background:
		// once everything is idle it has done so or never will.
		synctest.Wait()
		if created, released := terms.Created(), terms.Released(); len(created) != 1 || !slices.Equal(created, released) {
			t.Fatalf("created %v, released %v: the late terminal leaked", created, released)
		}
		var killed bool
		for _, e := range client.Recorder.Entries() {
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(e.Msg, &m)
			killed = killed || m.Method == acp.MethodTerminalKill
		}
		if !killed {
			t.Error("the late terminal was released without terminal/kill")
		}
	})
}

// TestTerminalCommandOutlivesCleanupDeadline: a command in an editor
// terminal runs as long as it needs (only its own timeout limits it); the
// clean-up calls get their own deadline once it has ended, so its output
// reaches the model and the terminal is released. The commands run on
// synctest's clock: 6 s and 20 s pass at once.
func TestTerminalCommandOutlivesCleanupDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		runs    time.Duration
		timeout time.Duration // 0: none
		want    string
	}{
		{name: "6s", runs: 6 * time.Second, want: "six-done\n"},
		{name: "20s", runs: 20 * time.Second, want: "twenty-done\n"},
		{name: "20s_killed_at_its_timeout", runs: 20 * time.Second, timeout: 12 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				terms := &acptest.FakeTerminals{Script: map[string]acptest.FakeRun{
					"bash": {Runs: tc.runs, Output: tc.want},
				}}
				var res registry.Result
				var took time.Duration
				loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
					if tc.timeout > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.timeout)
						defer cancel()
					}
					start := time.Now()
					res = turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "run", Arguments: json.RawMessage(`{"command":"sleep; echo done"}`)})
					took = time.Since(start)
					return acp.StopEndTurn, nil
				})
				agent := newTestAgent(t, loop, t.TempDir())
				client := &acptest.Client{Terminals: terms, Permission: acptest.AllowOnce}
				conn := connect(t, agent, client, acp.ClientCapabilities{Terminal: true})
				sid := newSession(t, conn, t.TempDir())
				if _, err := prompt(conn, sid, "run it"); err != nil {
					t.Fatal(err)
				}
				// A call past its deadline is abandoned by the pipeline, and the
				// terminal's clean-up finishes in the background: wait for it.
				synctest.Wait()
				if created, released := terms.Created(), terms.Released(); len(created) != 1 || !slices.Equal(created, released) {
					t.Errorf("created %v, released %v: the terminal leaked", created, released)
				}
				if wantTook := min(tc.runs, cmp.Or(tc.timeout, tc.runs)); took != wantTook {
					t.Errorf("the call took %v, want %v", took, wantTook)
				}
				if tc.timeout > 0 {
					// The test tool reports a killed command as the pipeline's
					// timeout; the bash tool's own handling is tested in tools.
					if !res.IsError {
						t.Errorf("a command killed at its timeout gave %+v", res)
					}
					return
				}
				var card *presentation.TerminalCard
				if res.View != nil {
					card, _ = res.View.Card.(*presentation.TerminalCard)
				}
				if card == nil {
					t.Fatalf("result %+v has no terminal card", res)
				}
				if card.Output != tc.want || card.ExitCode == nil || *card.ExitCode != 0 {
					t.Errorf("card output %q exit %v, want %q and 0", card.Output, card.ExitCode, tc.want)
				}
			})
		})
	}
}
