package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// TodoItem is one task of the todo tool.
type TodoItem struct {
	Content  string  `json:"content" desc:"What the task is, in a short imperative sentence." min:"1"`
	Status   string  `json:"status" desc:"pending, in_progress (at most one task at a time) or completed." enum:"pending|in_progress|completed"`
	Priority *string `json:"priority,omitempty" desc:"high, medium or low." enum:"high|medium|low" default:"medium"`
}

// TodoArgs are the arguments of the todo tool.
type TodoArgs struct {
	Todos []TodoItem `json:"todos" desc:"The complete task list: every task, in order, with its current status. It replaces the previous list."`
}

const todoDoc = `Keep a task list for the current work, shown to the user as the plan. Use it for work with three or more steps: write the list when you start, mark a task in_progress before working on it and completed as soon as it is done, and add tasks you discover.
Always send the complete list; it replaces the previous one. Keep exactly one task in_progress while working.`

func (t *toolset) todoTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[TodoArgs]{
		Name: "todo", Title: "Update plan", Description: todoDoc, Kind: presentation.KindThink,
		PresentCall: func(call registry.Call, a TodoArgs) presentation.CallView {
			return presentation.CallView{Title: "Update plan", Kind: presentation.KindThink}
		},
		PresentResult: genericResult[TodoArgs],
	}, t.todo)
}

func (t *toolset) todo(ctx context.Context, call registry.Call, a TodoArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	entries := make([]host.PlanEntry, len(a.Todos))
	counts := map[string]int{}
	for i, td := range a.Todos {
		entries[i] = host.PlanEntry{Content: td.Content, Status: td.Status, Priority: derefOr(td.Priority, "medium")}
		counts[td.Status]++
	}
	if err := h.Plan(ctx, entries); err != nil {
		return toolError(fmt.Sprintf("the plan could not be updated: %v", err))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Plan updated: %d tasks (%d completed, %d in progress, %d pending).", len(entries), counts["completed"], counts["in_progress"], counts["pending"])
	if counts["in_progress"] > 1 {
		sb.WriteString(" Note: keep only one task in_progress at a time.")
	}
	return registry.TextResult(sb.String()), nil
}
