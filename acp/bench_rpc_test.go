package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// benchFile is a 4 KiB source file, what an fs/read_text_file answer typically carries.
var benchFile = strings.Repeat("\tfmt.Println(\"hello, <world> & friends\") // a line of Go\n", 64)

// fileClient answers fs/read_text_file with benchFile and counts the calls.
type fileClient struct {
	acp.UnimplementedClient
	wg *sync.WaitGroup
}

func (c fileClient) ReadTextFile(context.Context, *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	defer c.wg.Done()
	return &acp.ReadTextFileResponse{Content: benchFile}, nil
}

// BenchmarkAnswer1k is the Go client answering 1,000 fs/read_text_file requests with 4 KiB
// each, replies discarded: each request read and decoded, the result encoded and written
// through jsonrpc2's Response.
func BenchmarkAnswer1k(b *testing.B) {
	var lines bytes.Buffer
	for i := range 1000 {
		lines.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) +
			`,"method":"fs/read_text_file","params":{"sessionId":"sess-1","path":"/work/cmd/main.go"}}` + "\n")
	}
	data := lines.Bytes()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var wg sync.WaitGroup
		wg.Add(1000)
		conn := acp.ConnectAgent(context.Background(), replayStream{bytes.NewReader(data)}, fileClient{wg: &wg})
		wg.Wait()
		<-conn.Done()
	}
}

// BenchmarkCall is the agent calling fs/read_text_file on a peer that answers each call with
// 4 KiB: the request written through jsonrpc2, the response read and decoded.
func BenchmarkCall(b *testing.B) {
	toPeer, peerIn := io.Pipe()
	peerOut, fromPeer := io.Pipe()
	answer := `,"result":{"content":` + strconv.Quote(benchFile) + `}}` + "\n"
	go func() { // one response per request line, same id
		r := bufio.NewReader(toPeer)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			id, _, _ := strings.Cut(string(line[bytes.Index(line, []byte(`"id":`))+5:]), ",")
			if _, err := io.WriteString(fromPeer, `{"jsonrpc":"2.0","id":`+strings.TrimSuffix(id, "}")+answer); err != nil {
				return
			}
		}
	}()
	stream := struct {
		io.Reader
		io.Writer
		io.Closer
	}{peerOut, peerIn, closers{peerOut, peerIn, toPeer, fromPeer}}
	client := acp.ConnectClient(context.Background(), stream, func(*acp.ClientConn) acp.Router { return acp.Router{} })
	defer client.Close()
	ctx := context.Background()
	req := &acp.ReadTextFileRequest{SessionID: "sess-1", Path: "/work/cmd/main.go"}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		res, err := client.ReadTextFile(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Content) != len(benchFile) {
			b.Fatalf("content of %d bytes", len(res.Content))
		}
	}
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}
