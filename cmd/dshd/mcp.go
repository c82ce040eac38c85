package main

import (
	"context"
	"io"
	"os"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools/mcp"
)

// mcpConnector connects the MCP servers an editor passes in session/new,
// load and resume, through tools/mcp, and follows their tool list changes.
type mcpConnector struct {
	version string
}

var _ bridge.MCPConnector = mcpConnector{}

func (c mcpConnector) Connect(ctx context.Context, session bridge.SessionInfo, servers []acp.McpServer, changed bridge.MCPToolsChanged) ([]*registry.Definition, io.Closer, []error) {
	var configs []mcp.ServerConfig
	for _, s := range servers {
		switch v := s.Value.(type) {
		case *acp.McpServerStdio:
			env := make(map[string]string, len(v.Env))
			for _, e := range v.Env {
				env[e.Name] = e.Value
			}
			configs = append(configs, mcp.ServerConfig{Name: v.Name, Type: mcp.TypeStdio, Command: v.Command, Args: v.Args, Env: env})
		case *acp.McpServerHTTP:
			configs = append(configs, mcp.ServerConfig{Name: v.Name, Type: mcp.TypeHTTP, URL: v.URL, Headers: headers(v.Headers)})
		}
	}
	if len(configs) == 0 {
		return nil, nil, nil
	}
	conns, errs := mcp.Connect(ctx, configs, mcp.Options{Dir: session.Cwd, Stderr: os.Stderr, ClientName: "dshd", ClientVersion: c.version, OnToolsChanged: changed})
	return conns.Tools(), conns, errs
}

func headers(hs []acp.HTTPHeader) map[string]string {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}
