package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

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
