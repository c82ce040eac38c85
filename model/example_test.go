package model_test

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/registry"
)

// The built-in loop over the scripted model, served by the bridge: the
// editor sees the model's text streamed as agent message chunks.
func Example() {
	sc, err := script.Parse([]byte(`{"turns":[{"responses":[{"text":["Hello ","from the loop."]}]}]}`))
	if err != nil {
		panic(err)
	}
	reg := registry.New()
	loop := model.New(model.Options{Provider: script.New(sc), Registry: reg})
	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, Prompt: loop.PromptCapabilities()})

	agentEnd, editorEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go agent.Serve(ctx, agentEnd)
	editor := &acptest.Client{}
	conn := editor.Serve(ctx, editorEnd)
	_, _ = conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
	sess, _ := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: os.TempDir(), MCPServers: []acp.MCPServer{}})
	resp, _ := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("hi")}})
	for _, n := range editor.Updates() {
		if u, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
			fmt.Print(u.Content.Value.(*acp.TextContent).Text)
		}
	}
	fmt.Println()
	fmt.Println("stop:", resp.StopReason)
	// Output:
	// Hello from the loop.
	// stop: end_turn
}
