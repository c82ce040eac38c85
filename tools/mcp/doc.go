// Package mcp brings the MCP servers an editor passes in session/new,
// session/load and session/resume into a session as tools. It connects each
// server (stdio, or streamable HTTP) with the official go-sdk, lists its
// tools and turns each into a raw [registry.Definition] named
// mcp__<server>__<tool>, whose parameters are the server's input schema,
// enforced before the call is dispatched. Results map to presentation
// content (text, images, audio, resource links, embedded resources).
//
// For example, the bridge connects a session's servers and registers
// what they offer:
//
//	servers, errs := mcp.Connect(ctx, []mcp.ServerConfig{{Name: "github", Command: "github-mcp-server", Args: []string{"stdio"}}}, mcp.Options{Dir: cwd})
//	defer servers.Close()               // ends the servers and what they started
//	_ = reg.AddScoped(sessionID, servers.Tools()...) // mcp__github__create_issue, …
//	for _, err := range errs { … }      // a server that failed to start, told to the user
//
// With [Options.OnToolsChanged] set, dshd subscribes to each server's
// notifications/tools/list_changed: the server is listed again (bursts of
// notifications coalesce into as few listings as keep up) and the merged
// list of every server is reported, newest last.
//
// A server that fails to start or to list its tools is reported as an
// error of its own; the others work. Stdio servers inherit neither stdin
// nor stdout from the daemon (their stdout is the protocol pipe, their
// stderr goes to the daemon's stderr). Each runs in a process group of its
// own, guarded by internal/procgroup: Close stops the server and kills
// whatever it started (a launcher's helpers), and the group dies with the
// daemon even when the daemon is killed.
package mcp
