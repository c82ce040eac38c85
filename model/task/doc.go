// Package task is the `task` tool: it lets the model start a subagent.
//
// The tool needs the loop and the bridge's pipeline, so it is made once the
// agent exists and offered to every session (ExampleNew):
//
//	var taskTool *registry.Definition
//	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg,
//		SessionTools: func(bridge.SessionInfo) []*registry.Definition { return []*registry.Definition{taskTool} }})
//	taskTool = task.New(task.Options{Loop: loop, Registry: reg, Pipeline: agent.Pipeline(), MaxDepth: 2})
//
// A task call names a prompt and, optionally, a tool subset (allow and
// deny lists over the caller's own visible tools: a subagent never gets
// more than its caller may use), an output schema and a step cap. The
// tool restricts a child scope of the caller's scope ("<scope>/task-N",
// with registry.Restrict), runs a sub-turn of the built-in loop in it
// ([model.Loop.RunSubturn]) and removes the scope when the sub-turn ends.
//
// The subagent's tool calls go through the same prompt turn
// ([bridge.Turn.Execute]) and therefore the same pipeline, modes, rules,
// guards and ask channel as the caller's; each carries the task call's
// token as its parent token, an id prefixed with the task's call id, and a
// title prefixed with "task ‹name›: ", so the editor shows them as the
// subagent's. The task card shows the subagent's progress while it runs
// and its answer when it is done.
//
// With an output schema the schema is checked with
// structured.AssertSupported before any model request (an unsupported one
// is an isError result listing every violation); it is the parameters of
// the sub-turn's forced final tool; the validated value is the task
// result's Structured field, and a subagent that fails to produce one
// [model.MaxStructuredAttempts] times fails the task with a structured
// error (code [CodeStructuredOutput], the violations in its details).
//
// Cancelling the caller's turn cancels the subagent and everything it
// runs. Subagents nest at most [DefaultMaxDepth] deep (Options.MaxDepth).
package task
