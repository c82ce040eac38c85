package bridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
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

	deadline := time.Now().Add(10 * time.Second)
	for {
		created, released := terms.Created(), terms.Released()
		if len(created) == 1 && slices.Equal(created, released) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("created %v, released %v: the late terminal leaked", created, released)
		}
		time.Sleep(10 * time.Millisecond)
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
}
