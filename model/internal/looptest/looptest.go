package looptest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/llm"
)

// Quiet returns a logger that discards everything.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Recorder wraps a provider and keeps every request it was sent.
type Recorder struct {
	llm.Provider
	// Started, if non-nil, is closed at the first request.
	Started chan struct{}

	mu   sync.Mutex
	reqs []*llm.Request
}

// Stream records a copy of req (its message list copied, so the loop
// appending to it later does not change the record) and passes it on.
func (r *Recorder) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	r.mu.Lock()
	r.reqs = append(r.reqs, &cp)
	if len(r.reqs) == 1 && r.Started != nil {
		close(r.Started)
	}
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req, emit)
}

// Requests returns the requests recorded so far.
func (r *Recorder) Requests() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*llm.Request(nil), r.reqs...)
}

// Connect serves agent on one end of an in-memory pipe and client on the
// other, and initializes the connection (protocol version 1). Both stop,
// and Connect waits for them, when the test ends.
func Connect(t testing.TB, agent *bridge.Agent, client *acptest.Client) (*acp.AgentConn, *acp.InitializeResponse) {
	t.Helper()
	return ConnectWith(t, agent, client, acp.ClientCapabilities{})
}

// ConnectWith is Connect with the client capabilities the client
// advertises.
func ConnectWith(t testing.TB, agent *bridge.Agent, client *acptest.Client, caps acp.ClientCapabilities) (*acp.AgentConn, *acp.InitializeResponse) {
	t.Helper()
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = agent.Serve(ctx, agentEnd)
	}()
	conn := client.Serve(ctx, clientEnd)
	t.Cleanup(func() {
		cancel()
		_ = conn.Close()
		<-served
		<-conn.Done()
	})
	init, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &caps})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return conn, init
}

// NewSession opens a session in cwd with no MCP servers.
func NewSession(t testing.TB, conn *acp.AgentConn, cwd string) string {
	t.Helper()
	s, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return s.SessionID
}

// Validate checks every message client recorded against the ACP schema,
// skipping the test when the schema is absent.
func Validate(t testing.TB, client *acptest.Client) {
	t.Helper()
	if err := client.Recorder.Validate(acptest.SchemaOrSkip(t)); err != nil {
		t.Fatal(err)
	}
}

// ToolResults returns the tool results of a request's last message.
func ToolResults(req *llm.Request) []*llm.ToolResult {
	if len(req.Messages) == 0 {
		return nil
	}
	var out []*llm.ToolResult
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if r, ok := p.(*llm.ToolResult); ok {
			out = append(out, r)
		}
	}
	return out
}

// ResultText is the concatenated text of a tool result.
func ResultText(r *llm.ToolResult) string {
	var s string
	for _, p := range r.Content {
		if t, ok := p.(*llm.Text); ok {
			s += t.Text
		}
	}
	return s
}

// WaitUpdates waits until the updates client received satisfy ok (each
// update wakes it; nothing polls). The deadline only bounds a failure: the
// agent runs real processes and file watches, which a synctest bubble
// cannot hold.
func WaitUpdates(t testing.TB, client *acptest.Client, what string, ok func([]acp.SessionNotification) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.WaitUpdates(ctx, ok); err != nil {
		t.Fatalf("no update: %s (%v)", what, err)
	}
}

// WaitUpdate waits until one update client received satisfies ok.
func WaitUpdate(t testing.TB, client *acptest.Client, what string, ok func(acp.SessionUpdateVariant) bool) {
	t.Helper()
	WaitUpdates(t, client, what, func(ns []acp.SessionNotification) bool {
		for _, n := range ns {
			if ok(n.Update.Value) {
				return true
			}
		}
		return false
	})
}
