package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// discardPeer is a peer that never says anything and throws away everything it is sent: the
// connection's write path measured alone.
type discardPeer struct{ closed chan struct{} }

func newDiscardPeer() *discardPeer { return &discardPeer{closed: make(chan struct{})} }

func (p *discardPeer) Read([]byte) (int, error) { <-p.closed; return 0, io.EOF }

func (p *discardPeer) Write(b []byte) (int, error) { return len(b), nil }

func (p *discardPeer) Close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return nil
}

// replayUpdates is a session/load replay's worth of updates: message chunks, tool calls and
// tool call updates carrying diffs, in a realistic mix.
func replayUpdates(n int) []acp.SessionUpdate {
	out := make([]acp.SessionUpdate, n)
	for i := range out {
		id := "call-" + strconv.Itoa(i/4)
		switch i % 4 {
		case 0:
			out[i] = acp.AgentMessage("Let me look at `main.go` and fix the <greeting> & exit code.\n")
		case 1:
			out[i] = acp.Update(&acp.ToolCall{ToolCallID: id, Title: "Edit main.go", Kind: acp.ToolKindEdit, Status: acp.ToolCallPending,
				Locations: []acp.ToolCallLocation{{Path: "/work/cmd/main.go"}}, RawInput: json.RawMessage(`{"path":"cmd/main.go"}`)})
		case 2:
			out[i] = acp.Update(&acp.ToolCallUpdate{ToolCallID: id, Status: acp.Ptr(acp.ToolCallInProgress)})
		default:
			u := benchUpdate()
			u.Value.(*acp.ToolCallUpdate).ToolCallID = id
			out[i] = u
		}
	}
	return out
}

const replaySize = 10_000

// BenchmarkNotify10k writes 10,000 typed session/update notifications through the connection
// (ClientConn.SessionUpdate) to a peer that discards them. Compare with BenchmarkNotify10kEncodeOnly,
// the cost of encoding the same params once and nothing else.
func BenchmarkNotify10k(b *testing.B) {
	ups := replayUpdates(replaySize)
	conn := serveDiscard(b)
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		for _, u := range ups {
			if err := conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "sess-1", Update: u}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkNotify10kPreEncoded is the bridge's replay path: the updates are already JSON (read
// from the session log) and are sent as json.RawMessage params through Notify.
func BenchmarkNotify10kPreEncoded(b *testing.B) {
	params := preEncodedParams(b, replayUpdates(replaySize))
	conn := serveDiscard(b)
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		for _, p := range params {
			if err := conn.Notify(ctx, acp.MethodSessionUpdate, p); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkNotify10kEncodeOnly is the reference: encoding the 10,000 notifications' params
// once each, no envelope, no connection.
func BenchmarkNotify10kEncodeOnly(b *testing.B) {
	ups := replayUpdates(replaySize)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		for _, u := range ups {
			out, err := json.Marshal(acp.SessionNotification{SessionID: "sess-1", Update: u})
			if err != nil {
				b.Fatal(err)
			}
			encodeSink = out
		}
	}
}

func preEncodedParams(b *testing.B, ups []acp.SessionUpdate) []json.RawMessage {
	out := make([]json.RawMessage, len(ups))
	for i, u := range ups {
		p, err := json.Marshal(acp.SessionNotification{SessionID: "sess-1", Update: u})
		if err != nil {
			b.Fatal(err)
		}
		out[i] = p
	}
	return out
}

func serveDiscard(b *testing.B) *acp.ClientConn {
	b.Helper()
	_, newAgent := newTestAgent(endTurn)
	ctx, cancel := context.WithCancel(context.Background())
	conn := acp.ConnectClient(ctx, newDiscardPeer(), newAgent)
	b.Cleanup(func() { cancel(); _ = conn.Close() })
	return conn
}

// BenchmarkNotify10kUpdateRaw is the bridge's replay path: the updates alone are pre-encoded
// (as its session log stores them) and sent inside params that hold them as json.RawMessage.
func BenchmarkNotify10kUpdateRaw(b *testing.B) {
	ups := replayUpdates(replaySize)
	raws := make([]json.RawMessage, len(ups))
	for i, u := range ups {
		raw, err := json.Marshal(u)
		if err != nil {
			b.Fatal(err)
		}
		raws[i] = raw
	}
	conn := serveDiscard(b)
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		for _, raw := range raws {
			if err := conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{"sess-1", raw}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
