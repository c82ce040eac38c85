// Package bridge turns an agent loop into a complete Agent Client Protocol
// agent. A Go program supplies the [Loop] (what to do with one prompt turn:
// ask a model, run the tools it calls); the bridge speaks ACP to the editor
// and does everything else: sessions, permission prompts, tool-call cards,
// cancellation and a durable log that survives a crash.
//
// To embed it, build an [Agent] with [New] over a [registry.Registry] of
// tools and serve an editor's connection with [Agent.Serve]:
//
//	reg := registry.New()
//	_ = reg.SetGlobal(tools.Builtin(tools.Options{})...)
//	loop := bridge.LoopFunc(func(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
//		t.Text("Reading go.mod.")
//		res := t.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"go.mod"}`)})
//		_ = res.Content // what the model reads back
//		return acp.StopEndTurn, nil
//	})
//	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, StateDir: dir})
//	err := agent.Serve(ctx, acp.Stdio(os.Stdin, os.Stdout))
//
// (Example_stdio is the compiled version; Example runs one over a pipe.)
// The built-in loop that drives a language model is model.Loop.
//
// # Turns
//
// Each session/prompt runs the loop once with a [Turn]. The loop reads the
// prompt, the history it remembered ([Turn.Remember]) and the tools the
// session may use, streams text, thoughts, plans and usage to the editor,
// and runs tool calls with [Turn.Execute]. Execute is the only way a call
// runs: it announces the call (tool_call), runs it through the [pipeline]
// (modes and rules from package policy, root confinement and protected
// paths, the permission prompt), and maps the result's presentation card to
// tool_call_update (a diff per hunk, an editor terminal, or text).
// session/cancel cancels the turn's context; nothing is sent after the
// turn's response.
//
// # Sessions
//
// An [Agent] serves many connections, each with many sessions: new, load
// (replaying the log), resume, fork, list, close and delete. Each session
// has a mode (the mode config option; policy owns the table), remembered
// permission answers (bridge/grants for the ones that outlive the
// session), its MCP servers' tools ([Options.MCP]) and, with
// [Options.Instructions], the repository's instructions: custom commands
// and skills as slash commands, the skill tool, nested AGENTS.md attached
// to tool results and [Turn.Project] for the system prompt. Everything a
// session did is appended to its log (bridge/sessionlog) as it happens:
// each record reaches the file before its update is sent, and the updates
// of calls running at once share a write (see outbox.go).
//
// # Hosts
//
// Tools reach the editor only through [host.Host], which the bridge
// implements per call: where a path argument lands (checked once, and again
// after a permission prompt), the editor's buffers (fs/read_text_file,
// fs/write_text_file) when it offers them and the disk otherwise, editor
// terminals, live progress and the plan.
package bridge
