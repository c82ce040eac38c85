package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync/atomic"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// replayStream is a peer that plays back a fixed byte stream and then hangs up; what is
// written to it is discarded.
type replayStream struct{ *bytes.Reader }

func (replayStream) Write(b []byte) (int, error) { return len(b), nil }
func (replayStream) Close() error                { return nil }

// countingClient decodes each update (the route does) and counts it.
type countingClient struct {
	acp.UnimplementedClient
	n atomic.Int64
}

func (c *countingClient) SessionUpdate(context.Context, *acp.SessionNotification) error {
	c.n.Add(1)
	return nil
}

func replayLines(b *testing.B) []byte {
	var lines bytes.Buffer
	for _, p := range preEncodedParams(b, replayUpdates(replaySize)) {
		lines.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":`)
		lines.Write(p)
		lines.WriteString("}\n")
	}
	return lines.Bytes()
}

// BenchmarkReceive10k reads 10,000 session/update lines on the client side: envelope checks,
// typed decoding, dispatch in order. Compare with BenchmarkNotify10kEncodeOnly (the other
// direction's floor) and BenchmarkReceive10kDecodeOnly (json.Unmarshal of the params alone).
func BenchmarkReceive10k(b *testing.B) {
	data := replayLines(b)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		cl := &countingClient{}
		conn := acp.ConnectAgent(context.Background(), replayStream{bytes.NewReader(data)}, cl)
		<-conn.Done()
		if cl.n.Load() != replaySize {
			b.Fatalf("%d updates handled", cl.n.Load())
		}
	}
}

// BenchmarkReceive10kAcptest is the same with the acptest client, which also records every
// line and keeps every update.
func BenchmarkReceive10kAcptest(b *testing.B) {
	data := replayLines(b)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		cl := &acptest.Client{}
		conn := cl.Serve(context.Background(), replayStream{bytes.NewReader(data)})
		<-conn.Done()
		if len(cl.Updates()) != replaySize {
			b.Fatalf("%d updates handled", len(cl.Updates()))
		}
	}
}

// BenchmarkReceive10kDecodeOnly is the reference: json.Unmarshal of each params object into a
// SessionNotification, nothing else.
func BenchmarkReceive10kDecodeOnly(b *testing.B) {
	params := preEncodedParams(b, replayUpdates(replaySize))
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		for _, p := range params {
			var n acp.SessionNotification
			if err := json.Unmarshal(p, &n); err != nil {
				b.Fatal(err)
			}
		}
	}
}

var _ io.ReadWriteCloser = replayStream{}
