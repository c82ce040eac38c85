package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// testAgent is a small agent: a session per session/new, and a prompt turn that runs turn().
type testAgent struct {
	conn *acp.ClientConn
	turn func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error)

	mu       sync.Mutex
	sessions int
	turns    map[string]context.CancelFunc
	cancels  []string // session ids whose session/cancel found a registered turn
}

func newTestAgent(turn func(context.Context, *acp.ClientConn, *acp.PromptRequest) (*acp.PromptResponse, error)) (*testAgent, func(*acp.ClientConn) acp.Router) {
	a := &testAgent{turn: turn, turns: map[string]context.CancelFunc{}}
	return a, a.routes
}

func (a *testAgent) routes(c *acp.ClientConn) acp.Router {
	a.conn = c
	return acp.Router{
		acp.MethodInitialize:    acp.StagedRoute(a.Initialize),
		acp.MethodSessionNew:    acp.StagedRoute(a.NewSession),
		acp.MethodSessionPrompt: acp.StagedRoute(a.Prompt),
		acp.MethodSessionCancel: acp.NotificationRoute(a.Cancel),
	}
}

// noRoutes are the routes of an agent that implements nothing.
func noRoutes(*acp.ClientConn) acp.Router { return nil }

// rawUpdate is session/update's params around an update that is already JSON.
type rawUpdate struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

func (a *testAgent) Initialize(_ context.Context, req *acp.InitializeRequest) (acp.Reply[acp.InitializeResponse], error) {
	return acp.Now(&acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1}), nil
}

func (a *testAgent) NewSession(_ context.Context, req *acp.NewSessionRequest) (acp.Reply[acp.NewSessionResponse], error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions++
	return acp.Now(&acp.NewSessionResponse{SessionID: fmt.Sprintf("s%d", a.sessions)}), nil
}

func (a *testAgent) Prompt(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
	ctx, cancel := context.WithCancel(ctx)
	a.mu.Lock()
	a.turns[req.SessionID] = cancel // registered on the reader, before any later session/cancel
	a.mu.Unlock()
	return acp.Later(func() (*acp.PromptResponse, error) {
		defer cancel()
		return a.turn(ctx, a.conn, req)
	}), nil
}

func (a *testAgent) Cancel(_ context.Context, n *acp.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cancel := a.turns[n.SessionID]; cancel != nil {
		cancel()
		a.cancels = append(a.cancels, n.SessionID)
	}
	return nil
}

func endTurn(context.Context, *acp.ClientConn, *acp.PromptRequest) (*acp.PromptResponse, error) {
	return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
}

// rawPeer drives an agent connection with hand-written lines.
type rawPeer struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func newRawPeer(t *testing.T, newAgent func(*acp.ClientConn) acp.Router) *rawPeer {
	t.Helper()
	agentEnd, peerEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	conn := acp.ConnectClient(ctx, agentEnd, newAgent)
	t.Cleanup(func() { cancel(); peerEnd.Close(); <-conn.Done() })
	return &rawPeer{t: t, conn: peerEnd, r: bufio.NewReader(peerEnd)}
}

// ioDeadline bounds a raw peer's read or write: a failure deadline, so it
// is the test binary's own (less a margin to report it) where there is one.
// A fixed 2 minutes was too short for the 16 MiB line under -race on a
// loaded machine (131 s with two busy loops beside -count=3).
func (p *rawPeer) ioDeadline() time.Time {
	if d, ok := p.t.Deadline(); ok {
		return d.Add(-10 * time.Second)
	}
	return time.Now().Add(10 * time.Minute)
}

func (p *rawPeer) send(line string) {
	p.t.Helper()
	_ = p.conn.SetWriteDeadline(p.ioDeadline())
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *rawPeer) recv() response {
	p.t.Helper()
	_ = p.conn.SetReadDeadline(p.ioDeadline())
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		p.t.Fatalf("reply %q is not JSON: %v", line, err)
	}
	if r.JSONRPC != "2.0" {
		p.t.Errorf("reply %s lacks jsonrpc 2.0", line)
	}
	return r
}

// TestConnProtocolErrors: every bad input gets the right reply (or none) and the connection
// keeps serving.
func TestConnProtocolErrors(t *testing.T) {
	_, newAgent := newTestAgent(endTurn)
	p := newRawPeer(t, newAgent)
	init := `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":1}}`
	tests := []struct {
		name   string
		lines  []string
		wantID string
		code   int64 // 0: a result
	}{
		{"malformed line", []string{`{"jsonrpc":"2.0","id":1,"method":`}, "null", acp.CodeParseError},
		{"not UTF-8", []string{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}"}, "null", acp.CodeParseError},
		{"valid after malformed", []string{fmt.Sprintf(init, "1")}, "1", 0},
		{"batch", []string{`[` + fmt.Sprintf(init, "2") + `]`}, "null", acp.CodeInvalidRequest},
		{"not an object", []string{`42`}, "null", acp.CodeInvalidRequest},
		{"no method, no result", []string{`{"jsonrpc":"2.0","id":3}`}, "null", acp.CodeInvalidRequest},
		{"fractional id", []string{`{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":1}}`}, "null", acp.CodeInvalidRequest},
		{"negative id", []string{`{"jsonrpc":"2.0","id":-4,"method":"initialize","params":{"protocolVersion":1}}`}, "null", acp.CodeInvalidRequest},
		{"method not a string", []string{`{"jsonrpc":"2.0","id":5,"method":7}`}, "5", acp.CodeInvalidRequest},
		{"wrong jsonrpc", []string{`{"jsonrpc":"1.0","id":6,"method":"initialize","params":{"protocolVersion":1}}`}, "6", acp.CodeInvalidRequest},
		{"jsonrpc not a string", []string{`{"jsonrpc":2.0,"id":6,"method":"initialize","params":{"protocolVersion":1}}`}, "null", acp.CodeInvalidRequest},
		{"jsonrpc escaped", []string{`{"jsonrpc":"2\u002e0","id":6,"method":"_unknown"}`}, "6", acp.CodeMethodNotFound},
		{"scalar params", []string{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":3}`}, "7", acp.CodeInvalidRequest},
		{"unknown method", []string{`{"jsonrpc":"2.0","id":8,"method":"session/fork","params":{}}`}, "8", acp.CodeMethodNotFound},
		{"unknown extension request", []string{`{"jsonrpc":"2.0","id":"x9","method":"_zed.dev/buffers","params":{}}`}, `"x9"`, acp.CodeMethodNotFound},
		{"unknown notifications are ignored", []string{
			`{"jsonrpc":"2.0","method":"_zed.dev/ping","params":{}}`,
			`{"jsonrpc":"2.0","method":"nope"}`,
			`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":999}}`,
			``,
			fmt.Sprintf(init, "10"),
		}, "10", 0},
		{"missing params", []string{`{"jsonrpc":"2.0","id":11,"method":"session/new"}`}, "11", acp.CodeInvalidParams},
		{"bad params", []string{`{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":"1"}}`}, "12", acp.CodeInvalidParams},
		{"unimplemented method", []string{`{"jsonrpc":"2.0","id":13,"method":"session/list"}`}, "13", acp.CodeMethodNotFound},
		{"CRLF line", []string{fmt.Sprintf(init, "14") + "\r"}, "14", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			for _, l := range tc.lines {
				p.send(l)
			}
			r := p.recv()
			if string(r.ID) != tc.wantID {
				t.Errorf("reply id %s, want %s", r.ID, tc.wantID)
			}
			switch {
			case tc.code == 0 && (r.Error != nil || r.Result == nil):
				t.Errorf("want a result, got error %+v", r.Error)
			case tc.code != 0 && (r.Error == nil || r.Error.Code != tc.code):
				t.Errorf("want error %d, got %+v (result %s)", tc.code, r.Error, r.Result)
			}
		})
	}
}

// TestConnHugeLine: a 16 MiB line (a prompt carrying a big text block, with escapes and
// multi-byte text) is read whole, and the connection keeps serving after it.
func TestConnHugeLine(t *testing.T) {
	const size = 16 << 20
	big := strings.Repeat("a", size) + "\n\"é"
	gotLen := make(chan int, 1)
	_, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		gotLen <- len(req.Prompt[0].Value.(*acp.TextContent).Text)
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	})
	p := newRawPeer(t, newAgent)
	// Built by hand: encoding 16 MiB through encoding/json under -race would dominate the test.
	params := `{"sessionId":"s1","prompt":[{"type":"text","text":"` + big[:size] + `\n\"é"}]}`
	go p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":` + params + `}`)
	if r := p.recv(); string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("reply %+v", r)
	}
	if n := <-gotLen; n != len(big) {
		t.Fatalf("agent saw %d bytes of text, want %d", n, len(big))
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`)
	if r := p.recv(); string(r.ID) != "2" || r.Error != nil {
		t.Fatalf("reply after the big line %+v", r)
	}
}

// TestConnLargeUpdate: a large notification (1 MiB) reaches the client intact, as one line.
func TestConnLargeUpdate(t *testing.T) {
	big := strings.Repeat("b", 1<<20) + "\n"
	_, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		if err := conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: req.SessionID, Update: acp.AgentMessage(big)}); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	})
	c := &acptest.Client{}
	conn := acptest.Connect(t, c, newAgent)
	if _, err := conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("x")}}); err != nil {
		t.Fatal(err)
	}
	ups := c.Updates()
	if len(ups) != 1 || ups[0].Update.Value.(*acp.AgentMessageChunk).Content.Value.(*acp.TextContent).Text != big {
		t.Fatalf("client did not receive the update intact")
	}
}

// waitFor polls the recorder until cond holds.
func waitFor(t *testing.T, rec *acptest.Recorder, what string, cond func([]acptest.Entry) bool) []acptest.Entry {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		changed := rec.Changed()
		if e := rec.Entries(); cond(e) {
			return e
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; transcript:\n%s", what, dump(rec.Entries()))
		}
	}
}

func dump(entries []acptest.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %.300s\n", e.Dir, e.Msg)
	}
	return b.String()
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *acp.Error      `json:"error"`
}

func parse(e acptest.Entry) wireMsg {
	var m wireMsg
	_ = json.Unmarshal(e.Msg, &m)
	return m
}

// responsesTo returns the responses sent in direction dir for id.
func responsesTo(entries []acptest.Entry, dir, id string) []wireMsg {
	var out []wireMsg
	for _, e := range entries {
		if m := parse(e); e.Dir == dir && m.Method == "" && string(m.ID) == id {
			out = append(out, m)
		}
	}
	return out
}

// requestID returns the id of the first request for method sent in direction dir.
func requestID(entries []acptest.Entry, dir, method string) string {
	for _, e := range entries {
		if m := parse(e); e.Dir == dir && m.Method == method && m.ID != nil {
			return string(m.ID)
		}
	}
	return ""
}

// TestConnInboundCancelRequest: the client cancels its prompt call; the agent's handler
// context is cancelled and the request is answered exactly once.
func TestConnInboundCancelRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		turnErr  bool // the handler returns ctx.Err() instead of a result
		wantCode int64
	}{
		{"result", false, 0},
		{"error", true, acp.CodeRequestCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			_, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
				close(started)
				<-ctx.Done()
				if tc.turnErr {
					return nil, ctx.Err()
				}
				return &acp.PromptResponse{StopReason: acp.StopCancelled}, nil
			})
			c := &acptest.Client{}
			conn := acptest.Connect(t, c, newAgent)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("hi")}})
				done <- err
			}()
			<-started
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, acp.ErrRequestCancelled) {
				t.Fatalf("Prompt error %v, want context.Canceled and ErrRequestCancelled", err)
			}
			entries := waitFor(t, c.Recorder, "the prompt's response", func(e []acptest.Entry) bool {
				id := requestID(e, acptest.ClientToAgent, acp.MethodSessionPrompt)
				return len(responsesTo(e, acptest.AgentToClient, id)) > 0
			})
			id := requestID(entries, acptest.ClientToAgent, acp.MethodSessionPrompt)
			if requestIDOfCancel(entries, acptest.ClientToAgent) != id {
				t.Errorf("no $/cancel_request for %s:\n%s", id, dump(entries))
			}
			_ = conn.Close() // flush: nothing more may arrive for this id
			rs := responsesTo(c.Recorder.Entries(), acptest.AgentToClient, id)
			if len(rs) != 1 {
				t.Fatalf("%d responses to %s, want exactly 1", len(rs), id)
			}
			if tc.wantCode == 0 && !strings.Contains(string(rs[0].Result), `"cancelled"`) {
				t.Errorf("result %s, want stopReason cancelled", rs[0].Result)
			}
			if tc.wantCode != 0 && (rs[0].Error == nil || rs[0].Error.Code != tc.wantCode) {
				t.Errorf("error %+v, want code %d", rs[0].Error, tc.wantCode)
			}
		})
	}
}

func requestIDOfCancel(entries []acptest.Entry, dir string) string {
	for _, e := range entries {
		if m := parse(e); e.Dir == dir && m.Method == acp.MethodCancelRequest {
			var n acp.CancelRequestNotification
			_ = json.Unmarshal(m.Params, &n)
			return n.RequestID.String()
		}
	}
	return ""
}

// TestConnOutboundCancel: session/cancel aborts a turn blocked in a permission request; the
// turn's context cancels the agent's call, which sends $/cancel_request; the client answers
// the permission request ("cancelled") and the prompt ends with stopReason cancelled.
func TestConnOutboundCancel(t *testing.T) {
	callErr := make(chan error, 1)
	a, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		_, err := conn.RequestPermission(ctx, &acp.RequestPermissionRequest{
			SessionID: req.SessionID,
			ToolCall:  acp.ToolCallUpdate{ToolCallID: "call-1", Title: acp.Ptr("rm -rf")},
			Options:   []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionAllowOnce}},
		})
		callErr <- err
		return &acp.PromptResponse{StopReason: acp.StopCancelled}, nil
	})
	c := &acptest.Client{Permission: acptest.BlockUntilCancelled}
	conn := acptest.Connect(t, c, newAgent)
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	resp := make(chan *acp.PromptResponse, 1)
	go func() {
		r, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("go")}})
		if err != nil {
			t.Error(err)
		}
		resp <- r
	}()
	waitFor(t, c.Recorder, "the permission request", func(e []acptest.Entry) bool {
		return requestID(e, acptest.AgentToClient, acp.MethodSessionRequestPermission) != ""
	})
	if err := conn.Cancel(ctx, &acp.CancelNotification{SessionID: sess.SessionID}); err != nil {
		t.Fatal(err)
	}
	if r := <-resp; r == nil || r.StopReason != acp.StopCancelled {
		t.Fatalf("prompt response %+v, want cancelled", r)
	}
	if err := <-callErr; !errors.Is(err, acp.ErrRequestCancelled) || !errors.Is(err, context.Canceled) {
		t.Errorf("RequestPermission error %v, want request cancelled", err)
	}
	entries := waitFor(t, c.Recorder, "the client's answer to the cancelled permission request", func(e []acptest.Entry) bool {
		id := requestID(e, acptest.AgentToClient, acp.MethodSessionRequestPermission)
		return len(responsesTo(e, acptest.ClientToAgent, id)) == 1
	})
	id := requestID(entries, acptest.AgentToClient, acp.MethodSessionRequestPermission)
	if got := requestIDOfCancel(entries, acptest.AgentToClient); got != id {
		t.Errorf("$/cancel_request named %q, want %q", got, id)
	}
	if r := responsesTo(entries, acptest.ClientToAgent, id); !strings.Contains(string(r[0].Result), `"cancelled"`) {
		t.Errorf("client answered %s, want outcome cancelled", r[0].Result)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cancels) != 1 {
		t.Errorf("session/cancel found %d turns, want 1", len(a.cancels))
	}
	acptest.CheckSchema(t, c.Recorder)
}

// TestConnUpdatesBeforeResponse: concurrent turns, each streaming updates and calling the
// client; every update of a turn is on the wire (and delivered) before the turn's response.
func TestConnUpdatesBeforeResponse(t *testing.T) {
	const turns, updates = 8, 20
	_, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		for i := 0; i < updates; i++ {
			if i == updates/2 {
				if _, err := conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: req.SessionID, Path: "/w/a.txt"}); err != nil {
					return nil, err
				}
			}
			if err := conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: req.SessionID, Update: acp.AgentMessage(fmt.Sprintf("%s-%d", req.SessionID, i))}); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	})
	c := &acptest.Client{FS: acptest.NewMemFS(map[string]string{"/w/a.txt": "x\n"})}
	conn := acptest.Connect(t, c, newAgent)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < turns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("t%d", i)
			if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text("go")}}); err != nil {
				t.Error(err)
				return
			}
			n := 0
			for _, u := range c.Updates() {
				if u.SessionID == sid {
					n++
				}
			}
			if n != updates {
				t.Errorf("%s: %d updates delivered before Prompt returned, want %d", sid, n, updates)
			}
		}()
	}
	wg.Wait()

	// On the wire: no update of a session after that session's prompt response.
	entries := c.Recorder.Entries()
	promptSession := map[string]string{} // request id → session
	answered := map[string]bool{}        // session → response seen
	for _, e := range entries {
		m := parse(e)
		switch {
		case e.Dir == acptest.ClientToAgent && m.Method == acp.MethodSessionPrompt:
			var p acp.PromptRequest
			_ = json.Unmarshal(m.Params, &p)
			promptSession[string(m.ID)] = p.SessionID
		case e.Dir == acptest.AgentToClient && m.Method == acp.MethodSessionUpdate:
			var n acp.SessionNotification
			_ = json.Unmarshal(m.Params, &n)
			if answered[n.SessionID] {
				t.Errorf("update for %s after its response", n.SessionID)
			}
		case e.Dir == acptest.AgentToClient && m.Method == "" && promptSession[string(m.ID)] != "":
			answered[promptSession[string(m.ID)]] = true
		}
	}
	if len(answered) != turns {
		t.Errorf("%d prompts answered, want %d", len(answered), turns)
	}
	acptest.CheckSchema(t, c.Recorder)
}

// TestConnClientErrors: error responses come back as *acp.Error with the peer's code.
func TestConnClientErrors(t *testing.T) {
	_, newAgent := newTestAgent(func(ctx context.Context, conn *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		_, err := conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: req.SessionID, Path: "/missing"})
		if !errors.Is(err, acp.ErrResourceNotFound) {
			return nil, fmt.Errorf("read error %v, want resource not found", err)
		}
		_, err = conn.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: req.SessionID, Command: "ls"})
		if !errors.Is(err, acp.ErrMethodNotFound) {
			return nil, fmt.Errorf("terminal error %v, want method not found", err)
		}
		return nil, fmt.Errorf("%w: session %s is busy", acp.ErrInvalidParams, req.SessionID)
	})
	c := &acptest.Client{FS: acptest.NewMemFS(nil)}
	conn := acptest.Connect(t, c, newAgent)
	_, err := conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("x")}})
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, "s1 is busy") {
		t.Fatalf("Prompt error %v, want -32602 with the handler's message", err)
	}
	acptest.CheckSchema(t, c.Recorder)
}

// TestConnPanicIsAnswered: a panicking handler still gets exactly one (-32603) reply.
func TestConnPanicIsAnswered(t *testing.T) {
	_, newAgent := newTestAgent(func(context.Context, *acp.ClientConn, *acp.PromptRequest) (*acp.PromptResponse, error) {
		panic("boom")
	})
	c := &acptest.Client{}
	conn := acptest.Connect(t, c, newAgent)
	_, err := conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("x")}})
	if !errors.Is(err, acp.ErrInternal) {
		t.Fatalf("error %v, want -32603", err)
	}
}

// TestConnReusesAnsweredID: a client may reuse a request id as soon as it has the response
// (ids need only be unique among pending requests); each reuse is served, none is rejected
// as already in flight.
func TestConnReusesAnsweredID(t *testing.T) {
	_, newAgent := newTestAgent(endTurn)
	p := newRawPeer(t, newAgent)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	if r := p.recv(); r.Error != nil {
		t.Fatalf("session/new: %+v", r.Error)
	}
	for i := range 200 { // session/prompt answers from its own goroutine
		p.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
		if r := p.recv(); string(r.ID) != "1" || r.Error != nil {
			t.Fatalf("reuse %d of id 1: reply %+v (error %+v)", i, r, r.Error)
		}
	}
}
