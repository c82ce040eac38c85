package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// lineTap collects the outbound lines of one connection.
type lineTap struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineTap) tap(dir acp.Direction, msg []byte) {
	if dir != acp.Outbound {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(msg))
}

func (l *lineTap) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// TestRawUpdatesMatchTyped: an update sent typed (SessionUpdate), as pre-encoded params or as
// a pre-encoded update inside params (also pretty-printed) is the same line on the wire and
// the same notification at the client.
func TestRawUpdatesMatchTyped(t *testing.T) {
	updates := replayUpdates(8)
	var out lineTap
	var conn *acp.ClientConn
	_, newAgent := newTestAgent(endTurn)
	c := &acptest.Client{}
	clientConn := acptest.Connect(t, c, func(cc *acp.ClientConn) acp.Router { conn = cc; return newAgent(cc) }, acp.WithTap(out.tap))
	ctx := context.Background()
	if _, err := clientConn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}); err != nil {
		t.Fatal(err)
	}
	out.take() // both ends share the tap option; keep only what follows

	for i, u := range updates {
		n := acp.SessionNotification{SessionID: "s\"1", Update: u}
		params, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		update, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		pretty, err := json.MarshalIndent(u, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		sends := []struct {
			name string
			send func() error
		}{
			{"typed", func() error {
				return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: n.SessionID, Update: u})
			}},
			{"raw params", func() error { return conn.Notify(ctx, acp.MethodSessionUpdate, json.RawMessage(params)) }},
			{"raw update", func() error { return conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{n.SessionID, update}) }},
			{"raw update, pretty", func() error { return conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{n.SessionID, pretty}) }},
		}
		for _, s := range sends {
			if err := s.send(); err != nil {
				t.Fatalf("update %d: %s: %v", i, s.name, err)
			}
		}
		lines := out.take()
		if len(lines) != len(sends) {
			t.Fatalf("update %d: %d lines written, want %d", i, len(lines), len(sends))
		}
		want := `{"jsonrpc":"2.0","method":"session/update","params":` + string(params) + `}`
		for j, l := range lines {
			if l != want {
				t.Errorf("update %d: %s wrote\n%s\nwant\n%s", i, sends[j].name, l, want)
			}
		}
	}
	// A round trip flushes the notifications to the client.
	if _, err := clientConn.Prompt(ctx, &acp.PromptRequest{SessionID: "s\"1", Prompt: []acp.ContentBlock{acp.Text("x")}}); err != nil {
		t.Fatal(err)
	}
	got := c.Updates()
	if len(got) != 4*len(updates) {
		t.Fatalf("client got %d updates, want %d", len(got), 4*len(updates))
	}
	for i, n := range got {
		want, _ := json.Marshal(acp.SessionNotification{SessionID: "s\"1", Update: updates[i/4]})
		if gotJSON, _ := json.Marshal(n); !bytes.Equal(gotJSON, want) {
			t.Errorf("client update %d: %s, want %s", i, gotJSON, want)
		}
	}
	acptest.CheckSchema(t, c.Recorder)
}

// TestRawUpdateErrors: raw params that cannot be framed safely are refused, and nothing is
// written.
func TestRawUpdateErrors(t *testing.T) {
	var out lineTap
	conn := acp.ConnectClient(context.Background(), newDiscardPeer(), noRoutes, acp.WithTap(out.tap))
	defer conn.Close()
	ctx := context.Background()
	for name, err := range map[string]error{
		"empty params":          conn.Notify(ctx, acp.MethodSessionUpdate, json.RawMessage{}),
		"invalid, multi-line":   conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{"s1", json.RawMessage("{\n")}),
		"invalid params":        conn.Notify(ctx, "x", json.RawMessage("[1,\n")),
		"invalid generic raw":   conn.Notify(ctx, "x", json.RawMessage("{")),
		"unencodable params":    conn.Notify(ctx, "x", map[string]any{"f": func() {}}),
		"unencodable call":      conn.Call(ctx, "x", map[string]any{"f": func() {}}, nil),
		"unencodable raw param": conn.Call(ctx, "x", json.RawMessage("nope"), nil),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if lines := out.take(); len(lines) != 0 {
		t.Errorf("wrote %q", lines)
	}
}

// TestConnResultEncodeFailure: a result that cannot be encoded is answered with -32603, once.
func TestConnResultEncodeFailure(t *testing.T) {
	type bad struct{ F func() }
	routes := acp.Router{"_test/bad": acp.SyncRoute(func(context.Context, *struct{}) (*bad, error) { return &bad{F: func() {}}, nil })}
	agentEnd, peerEnd := net.Pipe()
	conn := acp.ConnectClient(context.Background(), agentEnd, func(*acp.ClientConn) acp.Router { return routes })
	defer conn.Close()
	p := &rawPeer{t: t, conn: peerEnd, r: newReader(peerEnd)}
	for _, id := range []string{"1", "2"} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"_test/bad","params":{}}`)
		r := p.recv()
		if string(r.ID) != id || r.Error == nil || r.Error.Code != acp.CodeInternalError || r.Result != nil {
			t.Fatalf("reply %+v, want one -32603 for id %s", r, id)
		}
	}
}

// TestConnStrayResponses: responses nobody waits for are dropped; the connection keeps serving
// and routes real responses, error data included, to their calls.
func TestConnStrayResponses(t *testing.T) {
	agentEnd, peerEnd := net.Pipe()
	conn := acp.ConnectClient(context.Background(), agentEnd, noRoutes)
	defer conn.Close()
	p := &rawPeer{t: t, conn: peerEnd, r: newReader(peerEnd)}
	done := make(chan error, 1)
	go func() {
		_, err := conn.ReadTextFile(context.Background(), &acp.ReadTextFileRequest{SessionID: "s1", Path: "/a"})
		done <- err
	}()
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	line, err := p.r.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &req) != nil || req.Method != acp.MethodFSReadTextFile {
		t.Fatalf("request %q: %v", line, err)
	}
	p.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"` + string(req.ID) + `","result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32002,"message":"nope","data":{"uri":"file:///a"}}}`)
	err = <-done
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeResourceNotFound || string(ae.Data) != `{"uri":"file:///a"}` {
		t.Fatalf("error %v, want the peer's -32002 with its data", err)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}`)
	if r := p.recv(); string(r.ID) != "3" || r.Error == nil || r.Error.Code != acp.CodeMethodNotFound {
		t.Fatalf("reply %+v", r)
	}
}

// TestConnClosed: every way of sending fails with ErrClosed once the connection is closed,
// and a call waiting for its response fails with ErrClosed when the peer goes away.
func TestConnClosed(t *testing.T) {
	agentEnd, peerEnd := net.Pipe()
	conn := acp.ConnectClient(context.Background(), agentEnd, noRoutes)
	waiting := make(chan error, 1)
	go func() {
		_, err := conn.RequestPermission(context.Background(), &acp.RequestPermissionRequest{SessionID: "s1"})
		waiting <- err
	}()
	if _, err := newReader(peerEnd).ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	_ = peerEnd.Close()
	if err := <-waiting; !errors.Is(err, acp.ErrClosed) {
		t.Errorf("waiting call: %v, want ErrClosed", err)
	}
	<-conn.Done()
	ctx := context.Background()
	for name, err := range map[string]error{
		"Update":     conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.AgentMessage("x")}),
		"raw update": conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{"s1", json.RawMessage(`{}`)}),
		"NotifyRaw":  conn.Notify(ctx, "x", json.RawMessage(`{}`)),
		"Call":       conn.Call(ctx, "x", nil, nil),
	} {
		if !errors.Is(err, acp.ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed", name, err)
		}
	}
	if err := conn.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// TestConnResponseNullMembers: a response with "error":null beside its result completes the
// call with that result, one with "result":null beside an error fails it with that error, and
// neither is answered.
func TestConnResponseNullMembers(t *testing.T) {
	agentEnd, peerEnd := net.Pipe()
	conn := acp.ConnectClient(context.Background(), agentEnd, noRoutes)
	defer conn.Close()
	lines := make(chan []byte, 16) // everything the agent writes, read at once so it never blocks
	go func() {
		r := newReader(peerEnd)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	send := func(line string) {
		if _, err := peerEnd.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		reply   string // %s is the request's id
		errCode int64
	}{
		{`{"jsonrpc":"2.0","id":%s,"result":{},"error":null}`, 0},
		{`{"jsonrpc":"2.0","id":%s,"error":null,"result":{}}`, 0},
		{`{"jsonrpc":"2.0","id":%s,"result":null,"error":{"code":-32002,"message":"nope"}}`, acp.CodeResourceNotFound},
	} {
		done := make(chan error, 1)
		go func() {
			// Without the fix the call would wait for a response that never comes.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := conn.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: "s1", Path: "/a", Content: "x"})
			done <- err
		}()
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		line := <-lines
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatalf("request %q: %v", line, err)
		}
		send(fmt.Sprintf(tc.reply, req.ID))
		err := <-done
		var ae *acp.Error
		switch {
		case tc.errCode == 0 && err != nil:
			t.Fatalf("reply %s: %v, want success (agent wrote %q)", tc.reply, err, drain(lines))
		case tc.errCode != 0 && (!errors.As(err, &ae) || ae.Code != tc.errCode):
			t.Fatalf("reply %s: %v, want the peer's %d (agent wrote %q)", tc.reply, err, tc.errCode, drain(lines))
		}
	}
	// Nothing was written back: the next line is the answer to this request.
	send(`{"jsonrpc":"2.0","id":"next","method":"initialize","params":{"protocolVersion":1}}`)
	if line := <-lines; !bytes.Contains(line, []byte(`"id":"next"`)) {
		t.Fatalf("agent wrote %q, want the answer to id \"next\" (a response was answered)", line)
	}
}

// drain returns the lines waiting in lines.
func drain(lines <-chan []byte) []string {
	var out []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return out
			}
			out = append(out, string(l))
		default:
			return out
		}
	}
}

// TestOutboundLinesAreUTF8: raw JSON the agent sends (rawInput, rawOutput, _meta, raw
// updates and params, results, error data) may hold bytes that are not UTF-8, e.g. a tool's
// output; every line written is still valid UTF-8 and JSON, each such byte sent as \ufffd.
func TestOutboundLinesAreUTF8(t *testing.T) {
	const bad = "\xff\xfe ok \xc3"
	raw := json.RawMessage(`{"p":"` + bad + `"}`)
	routes := acp.Router{
		"_test/result": acp.SyncRoute(func(context.Context, *struct{}) (*struct {
			Meta acp.Meta `json:"_meta"`
		}, error) {
			return &struct {
				Meta acp.Meta `json:"_meta"`
			}{Meta: raw}, nil
		}),
		"_test/error": acp.SyncRoute(func(context.Context, *struct{}) (*struct{}, error) {
			return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: "no " + bad, Data: raw}
		}),
	}
	agentEnd, peerEnd := net.Pipe()
	conn := acp.ConnectClient(context.Background(), agentEnd, func(*acp.ClientConn) acp.Router { return routes })
	defer conn.Close()
	r := newReader(peerEnd)
	readLine := func() []byte {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	ctx := context.Background()
	// each case makes the agent write one line, which the test then reads.
	tests := []struct {
		name string
		send func() error
	}{
		{"tool_call", func() error {
			return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.Update(&acp.ToolCall{ToolCallID: "c", Title: "t", RawInput: raw, RawOutput: raw, Meta: raw})})
		}},
		{"tool_call_update", func() error {
			return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.Update(&acp.ToolCallUpdate{ToolCallID: "c", RawInput: raw, RawOutput: raw, Meta: raw})})
		}},
		{"text chunk meta", func() error {
			return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.Update(&acp.AgentMessageChunk{Content: acp.ContentBlock{Value: &acp.TextContent{Text: bad, Meta: raw}}, Meta: raw})})
		}},
		{"plan (generic encoder)", func() error {
			return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.Update(&acp.Plan{Entries: []acp.PlanEntry{}, Meta: raw})})
		}},
		{"notification meta", func() error {
			return conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: acp.AgentMessage("x"), Meta: raw})
		}},
		{"raw update", func() error {
			return conn.Notify(ctx, acp.MethodSessionUpdate, rawUpdate{"s1", json.RawMessage(`{"sessionUpdate":"plan","entries":[],"_meta":` + string(raw) + `}`)})
		}},
		{"NotifyRaw", func() error { return conn.Notify(ctx, "_test/n", raw) }},
		{"Notify raw params", func() error { return conn.Notify(ctx, "_test/n", raw) }},
		{"Notify struct", func() error {
			return conn.Notify(ctx, "_test/n", struct {
				R json.RawMessage `json:"r"`
			}{raw})
		}},
		{"request params", func() error {
			go func() { _ = conn.Call(ctx, "_test/call", raw, nil) }()
			return nil
		}},
		{"result", func() error {
			_, err := peerEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"_test/result","params":{}}` + "\n"))
			return err
		}},
		{"error data", func() error {
			_, err := peerEnd.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"_test/error","params":{}}` + "\n"))
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errc := make(chan error, 1)
			go func() { errc <- tc.send() }()
			line := readLine()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if !utf8.Valid(line) || !json.Valid(line) {
				t.Fatalf("wrote %q: not valid UTF-8 JSON", line)
			}
			if !bytes.Contains(line, []byte(`\ufffd\ufffd ok \ufffd`)) {
				t.Errorf("wrote %q: the invalid bytes are not each \\ufffd", line)
			}
		})
	}
}
