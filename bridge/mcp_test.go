package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// fakeMCP "connects" every server: a server named "broken" fails, the
// others contribute one tool each. changed is the bridge's callback of
// the last Connect; early, if set, is a list reported before Connect
// returns.
type fakeMCP struct {
	closed  atomic.Int32
	changed bridge.MCPToolsChanged
	early   []*registry.Definition
}

func mcpTool(name, says string) *registry.Definition {
	return &registry.Definition{
		Name: name, Description: "Say something.", Kind: presentation.KindRead,
		Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.TextResult(says), nil
		},
	}
}

func (f *fakeMCP) Connect(_ context.Context, s bridge.SessionInfo, servers []acp.MCPServer, changed bridge.MCPToolsChanged) ([]*registry.Definition, io.Closer, []error) {
	f.changed = changed
	if f.early != nil {
		changed(f.early, nil)
	}
	var defs []*registry.Definition
	var errs []error
	for _, srv := range servers {
		stdio, ok := srv.Value.(*acp.MCPServerStdio)
		if !ok {
			continue
		}
		if stdio.Name == "broken" {
			errs = append(errs, errors.New(`MCP server "broken" failed to start: exec: no such file`))
			continue
		}
		defs = append(defs, mcpTool("mcp__"+stdio.Name+"__hello", "hello from "+stdio.Name+" in "+s.ID))
	}
	return defs, closerFunc(func() error { f.closed.Add(1); return nil }), errs
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// TestMCPServers: the session's MCP tools are scope-local and visible to
// the loop; a failing server is reported to the user and does not fail
// the session; closing the session closes the servers.
func TestMCPServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		servers := []acp.MCPServer{
			{Value: &acp.MCPServerStdio{Name: "good", Command: "/bin/good", Args: []string{}, Env: []acp.EnvVariable{}}},
			{Value: &acp.MCPServerStdio{Name: "broken", Command: "/bin/broken", Args: []string{}, Env: []acp.EnvVariable{}}},
		}
		sess, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: "/ws/project", MCPServers: servers})
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
	})
}

// TestMCPToolsChanged: a server's changed tool list replaces the session's
// MCP tools in one step (other session tools stay), a list that changes
// while Connect still runs wins over the one Connect returns, and a closed
// session ignores changes.
func TestMCPToolsChanged(t *testing.T) {
	var seen [][]string
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		var names []string
		for _, s := range turn.Tools() {
			names = append(names, s.Name)
		}
		seen = append(seen, names)
		return acp.StopEndTurn, nil
	})
	reg := registry.New()
	mcp := &fakeMCP{early: []*registry.Definition{mcpTool("mcp__good__early", "early")}}
	agent := bridge.New(bridge.Options{
		Loop: loop, Registry: reg, MCP: mcp, Logger: discardLogger(), NewSessionID: counter("s"),
		SessionTools: func(bridge.SessionInfo) []*registry.Definition {
			return []*registry.Definition{mcpTool("task", "task")}
		},
	})
	client := &acptest.Client{}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	servers := []acp.MCPServer{{Value: &acp.MCPServerStdio{Name: "good", Command: "/bin/good", Args: []string{}, Env: []acp.EnvVariable{}}}}
	sess, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: "/ws/project", MCPServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(conn, sess.SessionID, "one"); err != nil {
		t.Fatal(err)
	}
	mcp.changed([]*registry.Definition{mcpTool("mcp__good__a", "a"), mcpTool("mcp__good__b", "b")}, nil)
	if _, err := prompt(conn, sess.SessionID, "two"); err != nil {
		t.Fatal(err)
	}
	// A list that clashes with the session's own tools is refused whole.
	mcp.changed([]*registry.Definition{mcpTool("task", "impostor")}, nil)
	if _, err := prompt(conn, sess.SessionID, "three"); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"mcp__good__early", "task"},
		{"mcp__good__a", "mcp__good__b", "task"},
		{"mcp__good__a", "mcp__good__b", "task"},
	}
	if !slices.EqualFunc(seen, want, slices.Equal) {
		t.Errorf("tools per turn %v, want %v", seen, want)
	}
	if _, err := conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: sess.SessionID}); err != nil {
		t.Fatal(err)
	}
	mcp.changed([]*registry.Definition{mcpTool("mcp__good__late", "late")}, nil)
	if got := reg.Schemas(sess.SessionID); len(got) != 0 {
		t.Errorf("a change after close resurrected the session's tools: %v", got)
	}
}

// TestMCPReadOnlyHintInPlanMode is issue 14's finding 5: a server that
// declares its tool read-only does not get it run in plan mode; a
// permission rule (the user's word) does.
func TestMCPReadOnlyHintInPlanMode(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rules []string
		ran   bool
	}{
		{"no rule", nil, false},
		{"allowed by a rule", []string{"mcp__good__*"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Bool
			tool := &registry.Definition{
				Name: "mcp__good__look", Description: "Look.", Kind: presentation.KindOther, ReadOnlyHint: true,
				Parameters: json.RawMessage(`{"type":"object"}`),
				Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
					ran.Store(true)
					return registry.TextResult("looked"), nil
				},
			}
			var res registry.Result
			loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
				res = turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: tool.Name, Arguments: json.RawMessage(`{}`)})
				return acp.StopEndTurn, nil
			})
			rules, err := policy.ParseRuleSet(tt.rules, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			reg := registry.New()
			if err := reg.SetGlobal(tool); err != nil {
				t.Fatal(err)
			}
			agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, Rules: rules, Logger: discardLogger(), NewSessionID: counter("s")})
			client := &acptest.Client{Permission: acptest.AllowOnce}
			conn := connect(t, agent, client, acp.ClientCapabilities{})
			sess, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: t.TempDir(), MCPServers: []acp.MCPServer{}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.SetSessionMode(context.Background(), &acp.SetSessionModeRequest{SessionID: sess.SessionID, ModeID: string(policy.ModePlan)}); err != nil {
				t.Fatal(err)
			}
			if _, err := prompt(conn, sess.SessionID, "look"); err != nil {
				t.Fatal(err)
			}
			if ran.Load() != tt.ran || res.IsError == tt.ran {
				t.Errorf("ran %v (result %+v), want ran %v", ran.Load(), res, tt.ran)
			}
		})
	}
}
