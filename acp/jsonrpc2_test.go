package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/internal/jsonscan"
	"github.com/sourcegraph/jsonrpc2"
)

// TestJSONRPC2HandlesInArrivalOrder pins guarantee 1 of the package doc: jsonrpc2 calls the
// handler for one message at a time, in arrival order, so route start functions run in that
// order and never concurrently. The start functions below share a slice without a lock: under
// -race, two of them running at once is reported as a data race; the order check catches any
// reordering.
func TestJSONRPC2HandlesInArrivalOrder(t *testing.T) {
	type params struct{ N int }
	var seen []int // guarded by the guarantee, not by a lock
	record := func(_ context.Context, p *params) error { seen = append(seen, p.N); return nil }
	const n = 500
	replied := make(chan struct{})
	routes := Router{
		"_test/request": SyncRoute(func(ctx context.Context, p *params) (*params, error) {
			_ = record(ctx, p)
			if p.N == n-1 {
				close(replied)
			}
			return p, nil
		}),
		"_test/notification": NotificationRoute(record),
	}
	var in strings.Builder
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"_test/request","params":{"N":%d}}`+"\n", i, i)
		} else {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"_test/notification","params":{"N":%d}}`+"\n", i)
		}
	}
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"_test/request","params":{"N":%d}}`+"\n", n-1, n-1)
	pr, pw := io.Pipe()
	conn := newConn(context.Background())
	conn.start(pipeRWC{Reader: pr, close: pr.Close, write: io.Discard.Write}, routes, []Option{WithLogger(slog.New(slog.DiscardHandler))})
	defer conn.Close()
	go func() { _, _ = io.WriteString(pw, in.String()) }()
	<-replied
	if len(seen) != n+1 {
		t.Fatalf("%d messages handled, want %d", len(seen), n+1)
	}
	for i, got := range seen[:n] {
		if got != i {
			t.Fatalf("message %d handled as number %d: %v", got, i, seen[:i+1])
		}
	}
}

// TestCodecParamsByToken pins the inbound fast path of the package doc: jsonrpc2 carries a
// token in place of each call's params and the handler takes the exact bytes of the line by
// it, whenever and in whatever order jsonrpc2 runs it: here under jsonrpc2.AsyncHandler, one
// goroutine a message, against the codec as the Conn sets it up.
func TestCodecParamsByToken(t *testing.T) {
	const n = 200
	lines := make([]string, n)
	var in strings.Builder
	for i := range lines {
		// Members out of order, spaces, escapes and number text encoding/json would change.
		lines[i] = fmt.Sprintf(`{ "z": [1.50, 2e3], "a" : "caf\u00e9 %d", "n": %d }`, i, i)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"_test/n","params":%s}`+"\n", lines[i])
	}
	s := newCodec(pipeRWC{Reader: strings.NewReader(in.String()), close: func() error { return nil }, write: io.Discard.Write}, nil, slog.New(slog.DiscardHandler))
	got := make(chan string, n)
	h := jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		p, err := s.takeParams(*req.Params)
		if err != nil {
			t.Error(err)
		}
		got <- string(p)
		return nil, nil
	}))
	conn := jsonrpc2.NewConn(context.Background(), s, h)
	defer conn.Close()
	want := map[string]bool{}
	for _, l := range lines {
		want[l] = true
	}
	for range n {
		p := <-got
		if !want[p] {
			t.Fatalf("params %q are not a line's exact bytes", p)
		}
		delete(want, p)
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if len(s.params) != 0 {
		t.Errorf("%d params left behind", len(s.params))
	}
}

// TestCodecResultByID pins the inbound fast path for results: for a call the Conn expects,
// jsonrpc2 carries resultToken in place of the result and hands each response to the call
// with its id, so the exact bytes kept by that id are the call's own. Responses arrive in
// reverse order; a second response to an id, and one to an id nobody expects, go to jsonrpc2
// as they are; nothing is left behind.
func TestCodecResultByID(t *testing.T) {
	const n = 100
	pr, pw := io.Pipe()
	defer pw.Close()
	s := newCodec(pipeRWC{Reader: pr, close: pr.Close, write: io.Discard.Write}, nil, slog.New(slog.DiscardHandler))
	conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) {
		return nil, nil
	}))
	defer conn.Close()
	result := func(i int) string { return fmt.Sprintf(`{ "z": [1.50, 2e3], "a" : "caf\u00e9 %d" }`, i) }
	waiters := make([]jsonrpc2.Waiter, n)
	for i := range waiters {
		s.expect(uint64(i + 1))
		w, err := conn.DispatchCall(context.Background(), "_test/call", nil, jsonrpc2.PickID(jsonrpc2.ID{Num: uint64(i + 1)}))
		if err != nil {
			t.Fatal(err)
		}
		waiters[i] = w
	}
	var in strings.Builder
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"result":%s}`+"\n", i+1, result(i))
	}
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":1,"result":{"second":true}}`+"\n")
	go func() { _, _ = io.WriteString(pw, in.String()) }()
	for i, w := range waiters {
		var got json.RawMessage
		if err := w.Wait(context.Background(), &got); err != nil {
			t.Fatal(err)
		}
		if string(got) != resultToken {
			t.Fatalf("jsonrpc2 handed call %d %s, not the token", i+1, got)
		}
		kept, ok := s.takeResult(uint64(i + 1))
		if !ok || string(kept) != result(i) {
			t.Fatalf("call %d: kept %q (%v), want its line's exact bytes %q", i+1, kept, ok, result(i))
		}
	}
	if s.keepResult(json.RawMessage("7"), json.RawMessage("{}")) {
		t.Error("kept the result of a response nobody expects")
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if len(s.results) != 0 {
		t.Errorf("%d results left behind", len(s.results))
	}
}

// captureStream records, for each message jsonrpc2 writes, what json.Marshal makes of it and
// the line the codec wrote.
type captureStream struct {
	*codec
	out  *bytes.Buffer
	want [][]byte
	got  [][]byte
}

func (c *captureStream) WriteObject(obj any) error {
	ref, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	c.want = append(c.want, jsonscan.AppendValidUTF8(nil, ref))
	c.out.Reset()
	err = c.codec.WriteObject(obj)
	c.got = append(c.got, bytes.TrimSuffix(bytes.Clone(c.out.Bytes()), []byte("\n")))
	return err
}

// writeThroughJSONRPC2 sends a request, a notification, a reply and an error reply through
// jsonrpc2 with the given parts, and checks each line the codec wrote is json.Marshal's
// encoding of jsonrpc2's message (then UTF-8 repaired), byte for byte.
func writeThroughJSONRPC2(t *testing.T, method string, params, result json.RawMessage, msg string, data json.RawMessage) {
	t.Helper()
	var out bytes.Buffer
	pr, pw := io.Pipe()
	defer pw.Close()
	cs := &captureStream{codec: newCodec(pipeRWC{Reader: pr, close: pr.Close, write: out.Write}, nil, slog.New(slog.DiscardHandler)), out: &out}
	conn := jsonrpc2.NewConn(context.Background(), cs, jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) {
		return nil, nil
	}))
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(jsonrpc2.ID{Str: msg, IsString: true})); err != nil {
		t.Fatal(err)
	}
	if err := conn.Notify(ctx, method, params); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendResponse(ctx, &jsonrpc2.Response{ID: jsonrpc2.ID{Num: 7}, Result: &result}); err != nil {
		t.Fatal(err)
	}
	rpcErr := &jsonrpc2.Error{Code: -32000, Message: msg}
	if len(data) > 0 {
		rpcErr.Data = &data
	}
	if err := conn.ReplyWithError(ctx, jsonrpc2.ID{Num: 8}, rpcErr); err != nil {
		t.Fatal(err)
	}
	for i := range cs.want {
		if !bytes.Equal(cs.got[i], cs.want[i]) {
			t.Fatalf("message %d written as\n%s\nwant (json.Marshal)\n%s", i, cs.got[i], cs.want[i])
		}
		if !json.Valid(cs.got[i]) || bytes.ContainsAny(cs.got[i], "\r\n") || !utf8.Valid(cs.got[i]) {
			t.Fatalf("message %d is not one line of valid UTF-8 JSON: %q", i, cs.got[i])
		}
	}
}

// TestWriteObjectMatchesMarshal: the codec writes jsonrpc2's messages from their own
// MarshalJSON, without json.Marshal's second pass over them, and the lines are the same.
func TestWriteObjectMatchesMarshal(t *testing.T) {
	for _, tc := range []struct {
		name, method, params, result, msg, data string
	}{
		{"plain", "session/prompt", `{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}`, `{"stopReason":"end_turn"}`, "failed", ""},
		{"spaces and newlines", "_x/y", "{ \"a\" :\n [1, 2.50, -0e1] }", "[\r\n true ]", "line\nbreak", `{"k": "v"}`},
		{"html and separators", "a<b>&c", `{"t":"<script>&\u2028"}`, "{\"t\":\"\u2028\u2029<>&\"}", "<&>", `"<>"`},
		{"bad UTF-8", "m\xff", "{\"t\":\"caf\xc3\"}", "{\"t\":\"\xed\xa0\x80\"}", "\xfe", "\"\xff\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeThroughJSONRPC2(t, tc.method, json.RawMessage(tc.params), json.RawMessage(tc.result), tc.msg, json.RawMessage(tc.data))
		})
	}
}

// FuzzWriteObject is TestWriteObjectMatchesMarshal on any parts.
func FuzzWriteObject(f *testing.F) {
	f.Add("session/update", []byte(`{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}`), []byte(`{}`), "x", []byte(`null`))
	f.Add("a<b", []byte("{ \"a\" :\n [1, 2.50] }"), []byte("\"\u2028\""), "m\n", []byte(`{"d":1}`))
	f.Fuzz(func(t *testing.T, method string, params, result []byte, msg string, data []byte) {
		if !json.Valid(params) || !json.Valid(result) || (len(data) > 0 && !json.Valid(data)) {
			return // jsonrpc2 refuses to send them
		}
		writeThroughJSONRPC2(t, method, params, result, msg, data)
	})
}
