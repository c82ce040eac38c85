package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
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
			conn = newConn(context.Background())
			conn.start(rwc, routes, []Option{WithLogger(slog.New(slog.DiscardHandler))})
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

// TestDecodeResponseNullMembers: a null "error" beside a "result" is no error (JSON-RPC
// peers that serialise both members write it), and a null "result" beside an error is no
// result; a response with neither, or with both non-null, is still invalid.
func TestDecodeResponseNullMembers(t *testing.T) {
	tests := []struct {
		name, line string
		result     string // the result kept, for a success
		errCode    int64  // the error kept, for an error response
		invalid    bool   // answered with -32600 and dropped
	}{
		{"null error after result", `{"jsonrpc":"2.0","id":1,"result":{},"error":null}`, `{}`, 0, false},
		{"null error before result", `{"jsonrpc":"2.0","id":1,"error":null,"result":{"a":1}}`, `{"a":1}`, 0, false},
		{"null error, null result", `{"jsonrpc":"2.0","id":1,"result":null,"error":null}`, `null`, 0, false},
		{"null result", `{"jsonrpc":"2.0","id":1,"result":null}`, `null`, 0, false},
		{"null result with error", `{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32000,"message":"x"}}`, "", -32000, false},
		{"error then null result", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"},"result":null}`, "", -32001, false},
		{"null error alone", `{"jsonrpc":"2.0","id":1,"error":null}`, "", 0, true},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32000,"message":"x"}}`, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var written bytes.Buffer
			s := newCodec(pipeRWC{Reader: strings.NewReader(tc.line + "\n"), write: written.Write}, nil, slog.New(slog.DiscardHandler))
			m, ok := s.check([]byte(tc.line))
			if tc.invalid {
				if ok || !strings.Contains(written.String(), `"code":-32600`) {
					t.Fatalf("read %+v, wrote %q; want the line answered with -32600 and dropped", m, written.String())
				}
				return
			}
			if !ok {
				t.Fatalf("dropped (wrote %q)", written.String())
			}
			if written.Len() != 0 {
				t.Errorf("answered a response with %q", written.String())
			}
			if m.isCall || string(m.id) != "1" {
				t.Fatalf("read %+v, want a response to id 1", m)
			}
			switch {
			case tc.errCode != 0 && (m.err == nil || m.err.Code != tc.errCode || m.result != nil):
				t.Errorf("error %+v, result %q; want error %d and no result", m.err, m.result, tc.errCode)
			case tc.errCode == 0 && (m.err != nil || string(m.result) != tc.result):
				t.Errorf("error %+v, result %q; want result %s", m.err, m.result, tc.result)
			}
			// jsonrpc2 reads what the codec hands it, with the same result.
			var resp jsonrpc2.Response
			if err := json.Unmarshal(m.canonical(nil), &resp); err != nil {
				t.Fatalf("jsonrpc2 cannot read %s: %v", m.canonical(nil), err)
			}
			if (resp.Error != nil) != (tc.errCode != 0) {
				t.Errorf("jsonrpc2 read %s as error=%v", m.canonical(nil), resp.Error)
			}
		})
	}
}
