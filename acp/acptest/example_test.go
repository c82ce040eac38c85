package acptest_test

import (
	"context"
	"fmt"
	"net"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// echoRoutes are the routes of an agent that replies to each prompt with its text.
func echoRoutes(client *acp.ClientConn) acp.Router {
	return acp.Router{acp.MethodSessionPrompt: acp.AsyncRoute(func(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		for _, b := range req.Prompt {
			if t, ok := b.Value.(*acp.TextContent); ok {
				n := &acp.SessionNotification{SessionID: req.SessionID, Update: acp.AgentMessage("echo: " + t.Text)}
				if err := client.SessionUpdate(ctx, n); err != nil {
					return nil, err
				}
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	})}
}

// In a test, acptest.Connect(t, c, echoRoutes) does the wiring below and cleans up.
func ExampleClient() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe()
	agent := acp.ConnectClient(ctx, agentEnd, echoRoutes)
	defer agent.Close()
	c := &acptest.Client{Permission: acptest.RejectOnce}
	conn := c.Serve(ctx, clientEnd)
	defer conn.Close()

	resp, err := conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("hello")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range c.Updates() {
		chunk := u.Update.Value.(*acp.AgentMessageChunk)
		fmt.Println(chunk.Content.Value.(*acp.TextContent).Text)
	}
	fmt.Println(resp.StopReason)
	for _, e := range c.Recorder.Entries() {
		fmt.Println(e.Dir, string(e.Msg))
	}
	// Output:
	// echo: hello
	// end_turn
	// client->agent {"id":1,"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hello"}]}}
	// agent->client {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"echo: hello"}}}}
	// agent->client {"id":1,"result":{"stopReason":"end_turn"},"jsonrpc":"2.0"}
}
