package bridge_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
)

// TestAuth: sessions need authentication until the client authenticates;
// terminal methods are only offered to clients that can run them; logout
// is advertised and works.
func TestAuth(t *testing.T) {
	var authed atomic.Bool
	auth := &bridge.Auth{
		Methods: []acp.AuthMethod{
			{Value: &acp.AuthMethodAgent{ID: "api-key", Name: "API key from the environment"}},
			{Value: &acp.AuthMethodTerminal{ID: "login", Name: "Log in", Args: []string{"--login"}}},
		},
		Required: func() bool { return !authed.Load() },
		Authenticate: func(_ context.Context, id string) error {
			authed.Store(true)
			return nil
		},
		Logout: func(context.Context) error { authed.Store(false); return nil },
	}
	agent := bridge.New(bridge.Options{Loop: &scriptLoop{}, Registry: registry.New(), Auth: auth, Logger: discardLogger()})
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go agent.Serve(ctx, agentEnd)
	conn := (&acptest.Client{}).Serve(ctx, clientEnd)

	init, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(init.AuthMethods) != 1 || init.AgentCapabilities.Auth == nil || init.AgentCapabilities.Auth.Logout == nil {
		t.Fatalf("initialize = %+v", init)
	}
	newReq := &acp.NewSessionRequest{Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}
	if _, err := conn.NewSession(ctx, newReq); !errors.Is(err, acp.ErrAuthRequired) {
		t.Fatalf("session/new before authenticate: %v, want -32000", err)
	}
	if _, err := conn.Authenticate(ctx, &acp.AuthenticateRequest{MethodID: "login"}); !errors.Is(err, acp.ErrInvalidParams) {
		t.Fatalf("authenticate with a terminal method: %v, want -32602", err)
	}
	if _, err := conn.Authenticate(ctx, &acp.AuthenticateRequest{MethodID: "api-key"}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, newReq); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Logout(ctx, &acp.LogoutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, newReq); !errors.Is(err, acp.ErrAuthRequired) {
		t.Fatalf("session/new after logout: %v, want -32000", err)
	}
}

// The legacy _meta "terminal-auth" hint (still sent by the ACP Registry's
// validator) gets the terminal methods too.
func TestAuthLegacyTerminalHint(t *testing.T) {
	auth := &bridge.Auth{Methods: []acp.AuthMethod{{Value: &acp.AuthMethodTerminal{ID: "login", Name: "Log in", Args: []string{"auth"}}}}}
	agent := bridge.New(bridge.Options{Loop: &scriptLoop{}, Registry: registry.New(), Auth: auth, Logger: discardLogger()})
	for _, tc := range []struct {
		meta string
		want int
	}{{`{"terminal-auth":true}`, 1}, {`{"terminal-auth":false}`, 0}, {`{"other":1}`, 0}} {
		agentEnd, clientEnd := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go agent.Serve(ctx, agentEnd)
		conn := (&acptest.Client{}).Serve(ctx, clientEnd)
		init, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{Meta: acp.Meta(tc.meta)}})
		cancel()
		if err != nil || len(init.AuthMethods) != tc.want {
			t.Errorf("_meta %s: auth methods %+v, %v; want %d", tc.meta, init, err, tc.want)
		}
	}
}
