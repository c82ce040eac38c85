package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// fakeMCP "connects" every server: a server named "broken" fails, the
// others contribute one tool each.
type fakeMCP struct{ closed atomic.Int32 }

func (f *fakeMCP) Connect(_ context.Context, s bridge.SessionInfo, servers []acp.McpServer) ([]*registry.Definition, io.Closer, []error) {
	var defs []*registry.Definition
	var errs []error
	for _, srv := range servers {
		stdio, ok := srv.Value.(*acp.McpServerStdio)
		if !ok {
			continue
		}
		if stdio.Name == "broken" {
			errs = append(errs, errors.New(`MCP server "broken" failed to start: exec: no such file`))
			continue
		}
		defs = append(defs, &registry.Definition{
			Name: "mcp__" + stdio.Name + "__hello", Description: "Say hello.", Kind: presentation.KindRead,
			Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
				return registry.TextResult("hello from " + stdio.Name + " in " + s.ID), nil
			},
		})
	}
	return defs, closerFunc(func() error { f.closed.Add(1); return nil }), errs
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// TestMCPServers: the session's MCP tools are scope-local and visible to
// the loop; a failing server is reported to the user and does not fail
// the session; closing the session closes the servers.
func TestMCPServers(t *testing.T) {
	mcp := &fakeMCP{}
	var tools []string
	var said string
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		for _, s := range turn.Tools() {
			tools = append(tools, s.Name)
		}
		res := turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "mcp__good__hello", Arguments: json.RawMessage(`{}`)})
		said = res.Content[0].Text
		return acp.StopEndTurn, nil
	})
	reg := registry.New()
	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, MCP: mcp, Logger: discardLogger(), NewSessionID: counter("s")})
	client := &acptest.Client{}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	servers := []acp.McpServer{
		{Value: &acp.McpServerStdio{Name: "good", Command: "/bin/good", Args: []string{}, Env: []acp.EnvVariable{}}},
		{Value: &acp.McpServerStdio{Name: "broken", Command: "/bin/broken", Args: []string{}, Env: []acp.EnvVariable{}}},
	}
	sess, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: "/ws/project", McpServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	waitForUpdate(t, client, func(u acp.SessionUpdateVariant) bool {
		m, ok := u.(*acp.AgentMessageChunk)
		return ok && m.Content.Value.(*acp.TextContent).Text == "⚠ MCP server \"broken\" failed to start: exec: no such file"
	})
	if _, err := prompt(conn, sess.SessionID, "hi"); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0] != "mcp__good__hello" || said != "hello from good in s-1" {
		t.Errorf("tools %v, said %q", tools, said)
	}
	if got := reg.Schemas("other-session"); len(got) != 0 {
		t.Errorf("MCP tools leaked out of the session: %v", got)
	}
	if _, err := conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: sess.SessionID}); err != nil {
		t.Fatal(err)
	}
	if mcp.closed.Load() != 1 {
		t.Errorf("MCP servers closed %d times, want 1", mcp.closed.Load())
	}
	if got := reg.Schemas(sess.SessionID); len(got) != 0 {
		t.Errorf("session tools outlived the session: %v", got)
	}
}
