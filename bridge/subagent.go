package bridge

import (
	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/registry"
)

// What a tool body needs to run nested calls on behalf of the call it
// serves (a subagent started by a task tool): the turn it runs in, to make
// its calls through [Turn.Execute] with [ToolCall].Parent set to its own
// token and Scope set to a child scope; and a way to show its progress on
// its own card.

// TurnOf returns the prompt turn running call (the call a tool body
// receives), or false outside a turn.
func TurnOf(call registry.Call) (*Turn, bool) {
	th, ok := call.Host().(*turnHost)
	if !ok || th.turn == nil {
		return nil, false
	}
	return th.turn, true
}

// ShowProgress replaces the content of a running call's card with text
// (a tool_call_update), for example a subagent's steps under its task card.
// A call that already completed or that shows a terminal is left alone.
func (t *Turn) ShowProgress(callID, text string) {
	t.mu.Lock()
	defer t.unlock()
	oc := t.open[callID]
	if oc == nil || oc.terminal || oc.editorTerminal != "" {
		return
	}
	t.sendLocked(&acp.ToolCallUpdate{ToolCallID: callID, Content: []acp.ToolCallContent{acp.ToolText(text)}})
}

// startedCall notes the token of a call whose body is starting, so that
// its children's log records can name it by call id.
func (t *Turn) startedCall(tok pipeline.Token, id string) {
	t.mu.Lock()
	if t.started == nil {
		t.started = map[pipeline.Token]string{}
	}
	t.started[tok] = id
	t.mu.Unlock()
}

func (t *Turn) endedCall(tok pipeline.Token) {
	t.mu.Lock()
	delete(t.started, tok)
	t.mu.Unlock()
}

// callIDOf is the call id of a running call of this turn, "" when tok is
// zero or names no running call.
func (t *Turn) callIDOf(tok pipeline.Token) string {
	if tok.IsZero() {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.started[tok]
}
