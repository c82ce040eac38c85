package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// mcpScript calls a tool its MCP server does not have yet, then again
// after the server added it.
const mcpScript = `{"turns":[
  {"match":"before","responses":[{"toolCalls":[{"id":"m1","name":"mcp__live__second","arguments":{}}]},{"text":"one"}]},
  {"match":"after","responses":[{"toolCalls":[{"id":"m2","name":"mcp__live__second","arguments":{}}]},{"text":"two"}]}]}`

// TestMCPToolListChanges: an HTTP MCP server passed in session/new adds a
// tool while the session runs (notifications/tools/list_changed); the
// model's next call of it works, without a new session.
func TestMCPToolListChanges(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "1"}, nil)
	addTool := func(name string) {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "from " + name}}}, nil
			})
	}
	addTool("first")
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()

	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptFile, []byte(mcpScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := &acptest.Client{Permission: acptest.AllowOnce}
	p := serveInProcess(t, ctx, dir, flags{script: scriptFile, stateDir: filepath.Join(dir, "state"), logLevel: "info"}, cl)
	d, conn := p.d, p.conn
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: t.TempDir(), MCPServers: []acp.MCPServer{
		{Value: &acp.MCPServerHTTP{Name: "live", URL: ts.URL, Headers: []acp.HTTPHeader{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "before", "m1"); st != acp.ToolCallFailed {
		t.Fatalf("the tool before the server added it: %s", st)
	}
	addTool("second")
	p.waitFor(t, func() bool { _, ok := d.registry.Lookup(sess.SessionID, "mcp__live__second"); return ok })
	if st := promptStatus(t, ctx, conn, cl, sess.SessionID, "after", "m2"); st != acp.ToolCallCompleted {
		t.Fatalf("the tool after the server added it: %s (%s)", st, lastRawOutput(cl, "m2"))
	}
	if raw := lastRawOutput(cl, "m2"); !strings.Contains(raw, "from second") {
		t.Errorf("result %s", raw)
	}
	p.exit(t)
}
