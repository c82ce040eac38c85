package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// TestStandInsAsJSONRPC2ReadsThem: the stand-in of each kind of message decodes, with
// jsonrpc2's own types, into the envelope of the original message (and nothing of its params
// or result).
func TestStandInsAsJSONRPC2ReadsThem(t *testing.T) {
	tests := []struct {
		name, line string
		check      func(t *testing.T, standIn []byte)
	}{
		{"request", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, func(t *testing.T, b []byte) {
			var r jsonrpc2.Request
			mustUnmarshal(t, b, &r)
			if r.Method != "session/prompt" || r.Notif || r.ID != (jsonrpc2.ID{Num: 7}) || r.Params != nil {
				t.Errorf("read %+v", r)
			}
		}},
		{"string id, escaped method", `{"jsonrpc":"2.0","id":"a\u0062","method":"_x/\u003c\"y\"","params":[1]}`, func(t *testing.T, b []byte) {
			var r jsonrpc2.Request
			mustUnmarshal(t, b, &r)
			if r.Method != `_x/<"y"` || r.ID != (jsonrpc2.ID{Str: "ab", IsString: true}) || r.Params != nil {
				t.Errorf("read %+v", r)
			}
		}},
		{"notification", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`, func(t *testing.T, b []byte) {
			var r jsonrpc2.Request
			mustUnmarshal(t, b, &r)
			if r.Method != "session/update" || !r.Notif || r.Params != nil {
				t.Errorf("read %+v", r)
			}
		}},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"content":"big"}}`, func(t *testing.T, b []byte) {
			var r jsonrpc2.Response
			mustUnmarshal(t, b, &r)
			if r.ID != (jsonrpc2.ID{Num: 3}) || r.Error != nil || r.Result == nil || string(*r.Result) != "null" {
				t.Errorf("read %+v", r)
			}
		}},
		{"error with data", `{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"m\u003c","data":{ "uri" : "x" }}}`, func(t *testing.T, b []byte) {
			var r jsonrpc2.Response
			mustUnmarshal(t, b, &r)
			if r.ID != (jsonrpc2.ID{Num: 4}) || r.Error == nil || r.Error.Code != -32002 || r.Error.Message != "m<" ||
				r.Error.Data == nil || string(*r.Error.Data) != `{"uri":"x"}` {
				t.Errorf("read %+v (error %+v)", r, r.Error)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &lineStream{r: bufio.NewReader(strings.NewReader(tc.line + "\n")), w: io.Discard, log: func(string, ...any) {}}
			m, err := s.readMessage()
			if err != nil {
				t.Fatal(err)
			}
			standIn := appendStandIn(nil, m)
			if !json.Valid(standIn) {
				t.Fatalf("stand-in %s is not JSON", standIn)
			}
			tc.check(t, standIn)
		})
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("jsonrpc2 cannot read %s: %v", b, err)
	}
}

// TestRPCMessageFallback: a shape appendRPCMessage does not build is reported, and
// WriteObject then writes what encoding/json makes of the message.
func TestRPCMessageFallback(t *testing.T) {
	meta := json.RawMessage(`{"m":1}`)
	params := json.RawMessage(`{}`)
	for name, tc := range map[string]struct {
		req  *jsonrpc2.Request
		resp *jsonrpc2.Response
	}{
		"request with meta":      {req: &jsonrpc2.Request{Method: "m", Params: &params, Meta: &meta}},
		"request extra field":    {req: &jsonrpc2.Request{Method: "m", ExtraFields: []jsonrpc2.RequestField{{Name: "x", Value: 1}}}},
		"response without parts": {resp: &jsonrpc2.Response{ID: jsonrpc2.ID{Num: 1}}},
		"response with meta":     {resp: &jsonrpc2.Response{ID: jsonrpc2.ID{Num: 1}, Result: &params, Meta: &meta}},
		"neither":                {},
	} {
		if _, ok := appendRPCMessage(nil, tc.req, tc.resp); ok {
			t.Errorf("%s: built", name)
		}
	}
	var out bytes.Buffer
	s := &lineStream{w: &out}
	s.onSend(&jsonrpc2.Request{Method: "m", Params: &params, Meta: &meta}, nil)
	if s.prepared != nil {
		t.Fatal("onSend prepared a line for a request with meta")
	}
	if err := s.WriteObject(map[string]any{"jsonrpc": "2.0", "method": "m", "meta": meta}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"jsonrpc":"2.0","meta":{"m":1},"method":"m"}`+"\n" {
		t.Errorf("fallback wrote %q", got)
	}
}

// TestJSONRPC2Lines: requests, notifications, results and errors sent through jsonrpc2 with
// the stream's hooks are the lines this package builds itself (jsonrpc2 would reorder the
// members and re-encode the params).
func TestJSONRPC2Lines(t *testing.T) {
	agentEnd, peer := net.Pipe()
	defer peer.Close()
	var mu sync.Mutex
	var lines []string
	tap := func(dir Direction, msg []byte) {
		if dir == Outbound {
			mu.Lock()
			lines = append(lines, string(msg))
			mu.Unlock()
		}
	}
	conn := Serve(context.Background(), agentEnd, Router{
		"ok":   SyncRoute(func(context.Context, *struct{}) (*struct{ A string }, error) { return &struct{ A string }{"<x>"}, nil }),
		"fail": SyncRoute(func(context.Context, *struct{}) (*struct{}, error) { return nil, ResourceNotFound("file:///a") }),
	}, WithTap(tap))
	defer conn.Close()
	r := bufio.NewReader(peer)
	readLine := func() string {
		t.Helper()
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(l, "\n")
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(peer, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"q","method":"ok","params":{}}`)
	if got, want := readLine(), `{"jsonrpc":"2.0","id":"q","result":{"A":"\u003cx\u003e"}}`; got != want {
		t.Errorf("result: %s, want %s", got, want)
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"fail","params":{}}`)
	if got, want := readLine(), `{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"resource not found: file:///a","data":{"uri":"file:///a"}}}`; got != want {
		t.Errorf("error: %s, want %s", got, want)
	}

	type result struct{ Content string }
	done := make(chan error, 1)
	var res result
	go func() {
		done <- conn.Call(context.Background(), "fs/read_text_file", map[string]string{"path": "/a<b>"}, &res)
	}()
	if got, want := readLine(), `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"/a\u003cb\u003e"}}`; got != want {
		t.Errorf("request: %s, want %s", got, want)
	}
	send(`{"jsonrpc":"2.0","id":1,"result":{"Content":"x\ny"}}`)
	if err := <-done; err != nil || res.Content != "x\ny" {
		t.Errorf("call: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 3 {
		t.Errorf("tap saw %d lines: %q", len(lines), lines)
	}
}

// TestManyNotificationMethods: notifications of more methods than the stream keeps decoded
// stand-ins for, interleaved and repeated, each reach their own route with their own params.
func TestManyNotificationMethods(t *testing.T) {
	const methods = 2*maxKeptNotifications + 3
	type params struct{ N int }
	var mu sync.Mutex
	got := map[string][]int{}
	routes := Router{}
	for i := range methods {
		method := fmt.Sprintf("_n/%d", i)
		routes[method] = NotificationRoute(func(_ context.Context, p *params) error {
			mu.Lock()
			got[method] = append(got[method], p.N)
			mu.Unlock()
			return nil
		})
	}
	var in bytes.Buffer
	for round := range 3 {
		for i := range methods {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"_n/%d","params":{"N":%d}}`+"\n", i, round*1000+i)
		}
	}
	conn := Serve(context.Background(), nopCloser{&in}, routes)
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection did not end at EOF")
	}
	for i := range methods {
		method := fmt.Sprintf("_n/%d", i)
		want := []int{i, 1000 + i, 2000 + i}
		if !reflect.DeepEqual(got[method], want) {
			t.Errorf("%s got %v, want %v", method, got[method], want)
		}
	}
}

type nopCloser struct{ io.Reader }

func (nopCloser) Write(b []byte) (int, error) { return len(b), nil }
func (nopCloser) Close() error                { return nil }
