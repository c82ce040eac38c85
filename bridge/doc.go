// Package bridge is the agent side of the Agent Client Protocol: it turns
// the tool pipeline and an agent loop into a complete ACP agent, and Go
// programs embed it with their own loop.
//
// It owns the sessions of each editor connection (new, load, resume, list,
// close, delete, modes and the mode config option), prompt turns and their
// cancellation, the mapping of tool calls and their presentation cards to
// tool_call/tool_call_update (diff per hunk, the three terminal tiers,
// generic text), the ask channel (session/request_permission showing the
// tool's preview of the call, such as an edit's diff, with remembered
// allow_always/reject_always rules), the session modes and permission rules
// as pre-execute listeners, root confinement and protected paths (a
// listener and guards over policy.LandIn and policy.Protected; each call's
// paths are landed once, landed again after a permission prompt, and the
// tool opens that landing through [host.Host.Land]), the client's file
// system and terminals offered to tools through [host.Host], the durable session log (bridge/sessionlog), and the [Loop]
// interface that embedders implement. With [Options.Instructions] it also
// serves the repository's instructions (package instructions): custom
// commands and skills as slash commands, the skill tool, nested AGENTS.md
// attached to tool results, and [Turn.Project] for the system prompt.
//
// Build an [Agent] with [New] and serve a connection with [Agent.Serve]:
//
//	agent := bridge.New(bridge.Options{Loop: myLoop, Registry: reg, StateDir: dir})
//	err := agent.Serve(ctx, stdio)
package bridge
