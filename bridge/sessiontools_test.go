package bridge_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
)

// TestRefreshSessionTools: RefreshSessionTools swaps each live session's
// session tools for what Options.SessionTools returns now, leaving its MCP
// tools and other sessions' tools alone; a closed session stays empty.
func TestRefreshSessionTools(t *testing.T) {
	var mu sync.Mutex
	current := []string{"task", "plan"}
	sessionTools := func(info bridge.SessionInfo) []*registry.Definition {
		mu.Lock()
		defer mu.Unlock()
		var defs []*registry.Definition
		for _, name := range current {
			defs = append(defs, mcpTool(name, name+" of "+info.ID))
		}
		return defs
	}
	set := func(names ...string) {
		mu.Lock()
		current = names
		mu.Unlock()
	}
	reg := registry.New()
	if err := reg.SetGlobal(mcpTool("global", "global")); err != nil {
		t.Fatal(err)
	}
	mcp := &fakeMCP{}
	agent := bridge.New(bridge.Options{
		Loop:     bridge.LoopFunc(func(context.Context, *bridge.Turn) (acp.StopReason, error) { return acp.StopEndTurn, nil }),
		Registry: reg, MCP: mcp, Logger: discardLogger(), NewSessionID: counter("s"),
		SessionTools: sessionTools,
	})
	conn := connect(t, agent, &acptest.Client{}, acp.ClientCapabilities{})
	servers := []acp.MCPServer{{Value: &acp.MCPServerStdio{Name: "good", Command: "/bin/good", Args: []string{}, Env: []acp.EnvVariable{}}}}
	var ids []string
	for range 2 {
		s, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: "/ws/project", MCPServers: servers})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.SessionID)
	}
	names := func(scope string) []string {
		var out []string
		for _, s := range reg.Schemas(scope) {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}

	steps := []struct {
		name  string
		tools []string
		want  []string
	}{
		{"at start", nil, []string{"global", "mcp__good__hello", "plan", "task"}},
		{"one removed", []string{"plan"}, []string{"global", "mcp__good__hello", "plan"}},
		{"none", []string{}, []string{"global", "mcp__good__hello"}},
		{"added back", []string{"task"}, []string{"global", "mcp__good__hello", "task"}},
		// A tool shadowing a global one is a session tool like any other.
		{"shadowing", []string{"task", "global"}, []string{"global", "mcp__good__hello", "task"}},
	}
	for _, st := range steps {
		if st.tools != nil {
			set(st.tools...)
			agent.RefreshSessionTools()
		}
		for _, id := range ids {
			if got := names(id); !slices.Equal(got, st.want) {
				t.Errorf("%s: session %s has %v, want %v", st.name, id, got, st.want)
			}
		}
	}
	// A failed swap (a clash with the session's MCP tools) keeps the
	// previous session tools.
	set("mcp__good__hello")
	agent.RefreshSessionTools()
	if got, want := names(ids[0]), []string{"global", "mcp__good__hello", "task"}; !slices.Equal(got, want) {
		t.Errorf("after a clash: %v, want %v", got, want)
	}

	if _, err := conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	set("task", "plan")
	agent.RefreshSessionTools()
	if got := reg.Schemas(ids[0]); len(got) != 1 || got[0].Name != "global" {
		t.Errorf("a refresh after close gave the closed session tools: %v", got)
	}
	if got, want := names(ids[1]), []string{"global", "mcp__good__hello", "plan", "task"}; !slices.Equal(got, want) {
		t.Errorf("live session: %v, want %v", got, want)
	}
}
