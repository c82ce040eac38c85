package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
)

// TestExtensions calls registered and unregistered extension methods over
// a real connection: params reach the handler verbatim, its result is the
// reply, its error becomes a JSON-RPC error, and the rest stays -32601.
func TestExtensions(t *testing.T) {
	echo := func(_ context.Context, params json.RawMessage) (any, error) {
		return map[string]json.RawMessage{"got": params}, nil
	}
	agent := bridge.New(bridge.Options{Loop: &scriptLoop{}, Registry: registry.New(), Logger: discardLogger(),
		Extensions: map[string]bridge.Extension{
			"_test/echo": echo,
			"_test/nil":  func(context.Context, json.RawMessage) (any, error) { return nil, nil },
			"_test/fail": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("broken") },
			"_test/bad": func(context.Context, json.RawMessage) (any, error) {
				return nil, fmt.Errorf("%w: want a name", acp.ErrInvalidParams)
			},
		}})
	conn := connect(t, agent, &acptest.Client{}, acp.ClientCapabilities{})

	tests := []struct {
		name     string
		method   string
		params   any
		want     string // the result as JSON, when code is 0
		code     int64
		contains string // part of the error message
	}{
		{name: "params reach the handler", method: "_test/echo", params: json.RawMessage(`{"a":[1,2],"b":"x"}`),
			want: `{"got":{"a":[1,2],"b":"x"}}`},
		{name: "nil result is an empty object", method: "_test/nil", params: struct{}{}, want: `{}`},
		{name: "plain error is internal", method: "_test/fail", params: struct{}{}, code: acp.CodeInternalError, contains: "_test/fail: broken"},
		{name: "acp error keeps its code", method: "_test/bad", params: struct{}{}, code: acp.CodeInvalidParams, contains: "want a name"},
		{name: "unregistered extension", method: "_x", params: struct{}{}, code: acp.CodeMethodNotFound},
		{name: "unregistered vendor extension", method: "_zed.dev/workspace/buffers", params: struct{}{}, code: acp.CodeMethodNotFound},
		{name: "no params reach the handler as none", method: "_test/echo", params: nil, want: `{"got":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got json.RawMessage
			err := conn.Call(context.Background(), tt.method, tt.params, &got)
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("%s: %v", tt.method, err)
				}
				if string(got) != tt.want {
					t.Fatalf("%s = %s, want %s", tt.method, got, tt.want)
				}
				return
			}
			var ae *acp.Error
			if !errors.As(err, &ae) || ae.Code != tt.code {
				t.Fatalf("%s: error %v, want code %d", tt.method, err, tt.code)
			}
			if tt.contains != "" && !strings.Contains(ae.Message, tt.contains) {
				t.Fatalf("%s: message %q, want it to contain %q", tt.method, ae.Message, tt.contains)
			}
		})
	}
	// An extension notification is ignored, even one with a handler, and
	// the connection goes on.
	if err := conn.Notify(context.Background(), "_test/echo", struct{}{}); err != nil {
		t.Fatal(err)
	}
	var got json.RawMessage
	if err := conn.Call(context.Background(), "_test/echo", json.RawMessage(`{"n":1}`), &got); err != nil || string(got) != `{"got":{"n":1}}` {
		t.Fatalf("after a notification: %s, %v", got, err)
	}
}

// TestExtensionNameMustBeExtension: a name outside the "_" namespace would
// claim a protocol method; New refuses it.
func TestExtensionNameMustBeExtension(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New accepted an extension named session/stats")
		}
	}()
	bridge.New(bridge.Options{Loop: &scriptLoop{}, Registry: registry.New(), Logger: discardLogger(),
		Extensions: map[string]bridge.Extension{"session/stats": func(context.Context, json.RawMessage) (any, error) { return nil, nil }}})
}
