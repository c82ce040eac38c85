package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools/mcp"
)

// mcpConnector connects the MCP servers an editor passes in session/new,
// load and resume, through tools/mcp, and follows their tool list changes.
type mcpConnector struct {
	version string
	// sandbox, when set, returns the launcher prefix stdio servers run
	// under (nil: unsandboxed), or why none may start.
	sandbox func(bridge.SessionInfo) ([]string, error)
}

var _ bridge.MCPConnector = (*mcpConnector)(nil)

func (c *mcpConnector) Connect(ctx context.Context, session bridge.SessionInfo, servers []acp.MCPServer, changed bridge.MCPToolsChanged) ([]*registry.Definition, io.Closer, []error) {
	var configs []mcp.ServerConfig
	var launcher []string
	var errs []error
	if c.sandbox != nil {
		var err error
		if launcher, err = c.sandbox(session); err != nil {
			// A required sandbox that cannot run: no stdio server starts.
			errs = append(errs, fmt.Errorf("stdio MCP servers not started: %w", err))
			servers = slices.DeleteFunc(slices.Clone(servers), func(s acp.MCPServer) bool {
				_, stdio := s.Value.(*acp.MCPServerStdio)
				return stdio
			})
		}
	}
	for _, s := range servers {
		switch v := s.Value.(type) {
		case *acp.MCPServerStdio:
			env := make(map[string]string, len(v.Env))
			for _, e := range v.Env {
				env[e.Name] = e.Value
			}
			command, args := v.Command, v.Args
			if len(launcher) > 0 {
				command, args = launcher[0], append(append(slices.Clone(launcher[1:]), v.Command), v.Args...)
			}
			configs = append(configs, mcp.ServerConfig{Name: v.Name, Type: mcp.TypeStdio, Command: command, Args: args, Env: env})
		case *acp.MCPServerHTTP:
			configs = append(configs, mcp.ServerConfig{Name: v.Name, Type: mcp.TypeHTTP, URL: v.URL, Headers: headers(v.Headers)})
		}
	}
	if len(configs) == 0 {
		return nil, nil, errs
	}
	conns, cerrs := mcp.Connect(ctx, configs, mcp.Options{Dir: session.Cwd, Stderr: os.Stderr, ClientName: "dshd", ClientVersion: c.version, OnToolsChanged: changed})
	return conns.Tools(), conns, append(errs, cerrs...)
}

func headers(hs []acp.HTTPHeader) map[string]string {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}
