package task_test

import (
	"fmt"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/model/task"
	"github.com/dsh-tools/dshd/registry"
)

// The task tool is a session tool: every session gets it, and its
// subagents run in child scopes of the session. The loop must know the
// registry the bridge runs tools from.
func ExampleNew() {
	reg := registry.New()
	loop := model.New(model.Options{Provider: script.New(&script.Script{Turns: []script.Turn{}}), Registry: reg})
	var agent *bridge.Agent
	var taskTool *registry.Definition
	agent = bridge.New(bridge.Options{
		Loop:            loop,
		Registry:        reg,
		StructuredTurns: true, // the built-in loop honours _meta.dshd.outputSchema
		SessionTools: func(bridge.SessionInfo) []*registry.Definition {
			return []*registry.Definition{taskTool}
		},
	})
	taskTool = task.New(task.Options{Loop: loop, Registry: reg, Pipeline: agent.Pipeline(), MaxDepth: 2})
	fmt.Println(taskTool.Name, taskTool.Kind)
	// Output: task think
}
