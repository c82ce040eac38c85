package acp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// pipeRWC is a connection's stream for white-box tests: reads come from r, writes go to write.
type pipeRWC struct {
	io.Reader
	write func([]byte) (int, error)
	close func() error
}

func (p pipeRWC) Write(b []byte) (int, error) { return p.write(b) }
func (p pipeRWC) Close() error                { return p.close() }

// TestConnIDFreeWhenReplyIsWritten: once the peer can read a reply, the request's id is no
// longer in flight, so a peer that reuses the id at once (ids need only be unique among
// pending requests) is served, not told "already in flight". The id is checked from inside
// the Write of the reply, the earliest moment the peer could see it.
func TestConnIDFreeWhenReplyIsWritten(t *testing.T) {
	type empty struct{}
	answer := func(context.Context, *empty) (*empty, error) { return &empty{}, nil }
	routes := Router{
		"_test/sync":  SyncRoute(answer),
		"_test/async": AsyncRoute(answer),
	}
	for _, method := range []string{"_test/sync", "_test/async"} {
		t.Run(method, func(t *testing.T) {
			pr, pw := io.Pipe()
			var conn *Conn
			connSet := make(chan struct{})
			inflightAtReply := make(chan bool, 1)
			rwc := pipeRWC{Reader: pr, close: pr.Close, write: func(b []byte) (int, error) {
				<-connSet
				if bytes.Contains(b, []byte(`"id":1,`)) {
					conn.mu.Lock()
					_, inflight := conn.inflight[jsonrpc2.ID{Num: 1}]
					conn.mu.Unlock()
					inflightAtReply <- inflight
				}
				return len(b), nil
			}}
			conn = Serve(context.Background(), rwc, routes, WithLogger(slog.New(slog.DiscardHandler)))
			close(connSet)
			defer conn.Close()
			if _, err := pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}` + "\n")); err != nil {
				t.Fatal(err)
			}
			if <-inflightAtReply {
				t.Error("id 1 was still in flight when its reply was written")
			}
		})
	}
}
