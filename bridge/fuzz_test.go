package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
)

// FuzzInboundLine sends one arbitrary line to a bridge with a live session
// and checks that the connection survives it: every line the agent writes
// is one JSON object, and a request sent afterwards is still answered.
func FuzzInboundLine(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"image"}]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"mode","value":true}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/load","params":{"sessionId":"../etc","cwd":"/","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"initialize"}`,
		`[{"jsonrpc":"2.0"}]`,
		"\x00\xff",
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		// In a bubble the timeout below is on the bubble's clock: it fires
		// only once agent and client are idle, when the probe's answer can
		// no longer come.
		synctest.Test(t, func(t *testing.T) {
			agent := bridge.New(bridge.Options{Loop: &scriptLoop{}, Registry: registry.New(), Logger: discardLogger(), NewSessionID: counter("s")})
			agentEnd, clientEnd := net.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan struct{})
			go func() { _ = agent.Serve(ctx, agentEnd); close(served) }()
			lines := make(chan []byte, 64)
			defer func() {
				cancel()
				clientEnd.Close()
				go func() {
					for range lines { // let the reader finish
					}
				}()
				<-served
			}()
			go func() {
				r := bufio.NewReader(clientEnd)
				for {
					l, err := r.ReadBytes('\n')
					if len(l) > 0 {
						lines <- l
					}
					if err != nil {
						close(lines)
						return
					}
				}
			}()
			go func() {
				// Writes may block until the agent reads; the agent may also
				// have closed the connection.
				for _, l := range []string{
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
					`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/ws/project","mcpServers":[]}}`,
					string(bytes.ReplaceAll([]byte(line), []byte("\n"), []byte(" "))),
					`{"jsonrpc":"2.0","id":"probe","method":"session/set_mode","params":{"sessionId":"s-1","modeId":"plan"}}`,
				} {
					if _, err := clientEnd.Write([]byte(l + "\n")); err != nil {
						return
					}
				}
			}()
			timeout := time.After(3 * time.Second)
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatal("the agent closed the connection")
					}
					var m struct {
						ID json.RawMessage `json:"id"`
					}
					if err := json.Unmarshal(l, &m); err != nil {
						t.Fatalf("agent wrote a line that is not JSON: %q", l)
					}
					if string(m.ID) == `"probe"` {
						return
					}
				case <-timeout:
					t.Fatal("agent and client are idle and the probe request was not answered")
				}
			}
		})
	})
}
