package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// Benchmarks of issue 6, end to end over real OS pipes with the ACP test
// client: a prompt turn of 1,000 no-op tool calls (allowed, and asked with
// the client answering every ask), and session/load of a 10,000-event
// session. Peak RSS of the process (agent and client together) is reported
// as peak-RSS-MB.

// pipeEnd joins a read and a write end of two OS pipes into one
// io.ReadWriteCloser.
type pipeEnd struct {
	r *os.File
	w *os.File
}

func (p pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeEnd) Close() error {
	p.w.Close()
	return p.r.Close()
}

func osPipes(tb testing.TB) (agentEnd, clientEnd io.ReadWriteCloser) {
	tb.Helper()
	toAgentR, toAgentW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	toClientR, toClientW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	return pipeEnd{r: toAgentR, w: toClientW}, pipeEnd{r: toClientR, w: toAgentW}
}

// servePipes serves agent over OS pipes until the benchmark ends and
// returns the client's end.
func servePipes(b *testing.B, agent *bridge.Agent) io.ReadWriteCloser {
	b.Helper()
	agentEnd, clientEnd := osPipes(b)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = agent.Serve(ctx, agentEnd); close(served) }()
	b.Cleanup(func() {
		cancel()
		clientEnd.Close()
		agentEnd.Close()
		<-served
	})
	return clientEnd
}

// benchSetup serves agent over OS pipes, connects the test client and
// opens a session in cwd.
func benchSetup(b *testing.B, agent *bridge.Agent, client *acptest.Client, cwd string) (*acp.AgentConn, string) {
	b.Helper()
	ctx := context.Background()
	conn := client.Serve(ctx, servePipes(b, agent))
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		b.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		b.Fatal(err)
	}
	return conn, sess.SessionID
}

// callsLoop makes n calls of tool per turn, with arguments args.
func callsLoop(n int, tool string, args json.RawMessage) bridge.Loop {
	return bridge.LoopFunc(func(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
		for i := 0; i < n; i++ {
			res := t.Execute(ctx, bridge.ToolCall{ID: "c" + strconv.Itoa(i), Name: tool, Arguments: args})
			if res.IsError {
				return "", fmt.Errorf("call %d failed: %s", i, res.Content[0].Text)
			}
		}
		return acp.StopEndTurn, nil
	})
}

// countingClient is the test client; it records every message, so the
// reported peak RSS (agent and client in one process) is an upper bound
// for the agent's.
func countingClient(policy acptest.PermissionPolicy) *acptest.Client {
	return &acptest.Client{Permission: policy, Recorder: acptest.NewRecorder()}
}

func benchmarkTurn(b *testing.B, tool string, args json.RawMessage, policy acptest.PermissionPolicy) {
	const calls = 1000
	agent := newTestAgent(b, callsLoop(calls, tool, args), b.TempDir())
	client := countingClient(policy)
	conn, sid := benchSetup(b, agent, client, "/ws/project")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text("go")}})
		if err != nil {
			b.Fatal(err)
		}
		if resp.StopReason != acp.StopEndTurn {
			b.Fatalf("stop reason %s", resp.StopReason)
		}
	}
	b.ReportMetric(float64(calls*b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// BenchmarkTurn1000Calls: 1,000 allowed no-op calls in one turn (target:
// at least 5,000 calls/s).
func BenchmarkTurn1000Calls(b *testing.B) {
	benchmarkTurn(b, "noop", json.RawMessage(`{}`), acptest.AllowOnce)
}

// BenchmarkTurn1000CallsAsked: every call asks and the client allows it
// once (target: at least 2,000 calls/s).
func BenchmarkTurn1000CallsAsked(b *testing.B) {
	benchmarkTurn(b, "run", json.RawMessage(`{"command":"true"}`), acptest.AllowOnce)
}

// writeBigSession writes a session log of 10,000 update events: message
// chunks and tool calls with their updates and diffs.
func writeBigSession(b *testing.B, dir, id string) {
	l, err := sessionlog.Create(dir, sessionlog.Header{SessionID: id, Cwd: "/ws/project", Created: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		var u acp.SessionUpdate
		switch i % 4 {
		case 0:
			u = acp.Update(&acp.AgentMessageChunk{Content: acp.Text("some words of the reply " + strconv.Itoa(i)), MessageID: acp.Ptr("m" + strconv.Itoa(i/4))})
		case 1:
			u = acp.Update(&acp.ToolCall{ToolCallID: "c" + strconv.Itoa(i), Title: "Read main.go", Kind: acp.ToolKindRead, Status: acp.ToolCallPending, RawInput: json.RawMessage(`{"path":"main.go"}`)})
		case 2:
			st := acp.ToolCallInProgress
			u = acp.Update(&acp.ToolCallUpdate{ToolCallID: "c" + strconv.Itoa(i-1), Status: &st})
		case 3:
			st := acp.ToolCallCompleted
			u = acp.Update(&acp.ToolCallUpdate{ToolCallID: "c" + strconv.Itoa(i-2), Status: &st,
				Content: []acp.ToolCallContent{acp.Diff("/ws/project/main.go", acp.Ptr("a\nb\n"), "a\nc\n")}})
		}
		if err := l.Append(sessionlog.KindUpdate, u); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoad10000Events: session/load of a session whose log holds
// 10,000 events, replayed to the test client (target: under 100 ms). The
// test client decodes every update into typed values, which is a large
// part of the figure; see BenchmarkLoad10000EventsRawClient.
func BenchmarkLoad10000Events(b *testing.B) {
	dir := b.TempDir()
	const id = "big"
	writeBigSession(b, dir, id)
	agent := newTestAgent(b, callsLoop(0, "noop", nil), dir)
	client := countingClient(acptest.AllowOnce)
	conn, _ := benchSetup(b, agent, client, "/ws/project")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: id, Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// BenchmarkLoad10000EventsRawClient is the same load with a client that
// only reads lines until the response: the agent's own cost over the
// pipes.
func BenchmarkLoad10000EventsRawClient(b *testing.B) {
	dir := b.TempDir()
	const id = "big"
	writeBigSession(b, dir, id)
	agent := newTestAgent(b, callsLoop(0, "noop", nil), dir)
	clientEnd := servePipes(b, agent)
	r := bufio.NewReaderSize(clientEnd, 1<<20)
	roundTrip := func(reqID int, line string) int {
		if _, err := io.WriteString(clientEnd, line+"\n"); err != nil {
			b.Fatal(err)
		}
		want := []byte(`"id":` + strconv.Itoa(reqID) + `,`)
		lines := 0
		for {
			l, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			lines++
			if bytes.Contains(l, want) && !bytes.Contains(l, []byte(`"method"`)) {
				if bytes.Contains(l, []byte(`"error"`)) {
					b.Fatalf("error response: %s", l)
				}
				return lines
			}
		}
	}
	roundTrip(1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := roundTrip(i+2, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+2)+`,"method":"session/load","params":{"sessionId":"big","cwd":"/ws/project","mcpServers":[]}}`)
		if n < 10000 {
			b.Fatalf("%d lines replayed", n)
		}
	}
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// peakRSSMB reads the process's peak resident set size (Linux).
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
