package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools"
)

// A program embedding the bridge with its own loop, serving an editor on
// stdio with the first-party tools. The README shows this body (a test
// keeps the two the same); Example runs the same over an in-memory pipe.
func Example_stdio() {
	ctx := context.Background()
	stateDir := filepath.Join(os.TempDir(), "my-agent") // the durable session logs
	reg := registry.New()
	if err := reg.SetGlobal(tools.Builtin(tools.Options{})...); err != nil {
		log.Fatal(err)
	}
	loop := bridge.LoopFunc(func(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
		// A real loop sends t.Prompt(), t.History() and t.Tools() to a model …
		t.Text("Reading go.mod.")
		res := t.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"go.mod"}`)})
		// … and gives it res.Content. Execute showed the call, asked for
		// permission when the policy said so, and mapped the result card.
		t.Text(fmt.Sprintf("go.mod: %d content block(s).", len(res.Content)))
		_ = t.Remember(json.RawMessage(`{"note":"what the loop needs next turn"}`))
		return acp.StopEndTurn, nil
	})
	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, StateDir: stateDir})
	if err := agent.Serve(ctx, acp.Stdio(os.Stdin, os.Stdout)); err != nil { // any io.ReadWriteCloser
		log.Fatal(err)
	}
}

// A loop embedding the bridge: it greets, calls one tool through the
// pipeline (the editor sees the tool call and its card) and reports the
// result. A real loop would send t.Prompt(), t.History() and t.Tools() to a
// model and execute the tool calls it asks for.
func Example() {
	echo := &registry.Definition{
		Name:        "echo",
		Description: "Echo the arguments.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Kind:        presentation.KindRead,
		Execute: func(_ context.Context, _ registry.Call, args json.RawMessage) (registry.Result, error) {
			return registry.TextResult(string(args)), nil
		},
	}
	reg := registry.New()
	if err := reg.SetGlobal(echo); err != nil {
		panic(err)
	}
	loop := bridge.LoopFunc(func(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
		t.Text(fmt.Sprintf("I have %d tool(s).", len(t.Tools())))
		res := t.Execute(ctx, bridge.ToolCall{ID: "call-1", Name: "echo", Arguments: json.RawMessage(`{"hi":1}`)})
		t.Text("echo said " + res.Content[0].Text)
		_ = t.Remember(json.RawMessage(`{"role":"assistant","text":"done"}`))
		return acp.StopEndTurn, nil
	})

	stateDir, _ := os.MkdirTemp("", "dshd-example")
	defer os.RemoveAll(stateDir)
	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, StateDir: stateDir})

	// An editor connects (here: the test client over an in-memory pipe).
	agentEnd, editorEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go agent.Serve(ctx, agentEnd)
	editor := &acptest.Client{}
	conn := editor.Serve(ctx, editorEnd)

	_, _ = conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
	sess, _ := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: os.TempDir(), MCPServers: []acp.MCPServer{}})
	resp, _ := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("hello")}})
	fmt.Println("stop:", resp.StopReason)
	for _, n := range editor.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.AgentMessageChunk:
			fmt.Println("message:", u.Content.Value.(*acp.TextContent).Text)
		case *acp.ToolCall:
			fmt.Println("tool_call:", u.Title, u.Status)
		case *acp.ToolCallUpdate:
			if u.Status != nil {
				fmt.Println("tool_call_update:", *u.Status)
			}
		}
	}
	// Output:
	// stop: end_turn
	// message: I have 1 tool(s).
	// tool_call: echo pending
	// tool_call_update: in_progress
	// tool_call_update: completed
	// message: echo said {"hi":1}
}
