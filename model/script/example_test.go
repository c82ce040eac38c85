package script_test

import (
	"context"
	"fmt"

	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
)

func Example() {
	s, err := script.Parse([]byte(`{"turns": [{"responses": [
		{"text": ["Let me ", "look."], "toolCalls": [{"id": "c1", "name": "read", "arguments": {"path": "README.md"}}]},
		{"text": "Done.", "usage": {"input": 10, "output": 2}}]}]}`))
	if err != nil {
		panic(err)
	}
	p := script.New(s)
	show := func(e llm.Event) {
		switch e := e.(type) {
		case llm.TextDelta:
			fmt.Printf("text %q\n", e.Text)
		case llm.ToolCallFinished:
			fmt.Printf("call %s %s %s\n", e.Call.ID, e.Call.Name, e.Call.Arguments)
		}
	}
	history := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "What is this project?"}}}}
	resp, _ := p.Stream(context.Background(), &llm.Request{Messages: history}, show)
	fmt.Println("stop:", resp.StopReason)

	// The loop runs the call and sends its result back.
	history = append(history, resp.Message, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		&llm.ToolResult{CallID: "c1", Content: []llm.Part{&llm.Text{Text: "# dshd"}}}}})
	resp, _ = p.Stream(context.Background(), &llm.Request{Messages: history}, show)
	fmt.Println("stop:", resp.StopReason, "usage:", resp.Usage.Input, resp.Usage.Output)
	// Output:
	// text "Let me "
	// text "look."
	// call c1 read {"path":"README.md"}
	// stop: tool_use
	// text "Done."
	// stop: end_turn usage: 10 2
}
