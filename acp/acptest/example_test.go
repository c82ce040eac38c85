package acptest_test

import (
	"context"
	"fmt"
	"net"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// echoAgent replies to each prompt with its text.
type echoAgent struct {
	acp.UnimplementedAgent
	conn *acp.ClientConn
}

func (a *echoAgent) Prompt(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
	// Registered on the read goroutine; the turn runs on its own goroutine.
	return acp.Later(func() (*acp.PromptResponse, error) {
		for _, b := range req.Prompt {
			if t, ok := b.Value.(*acp.TextContent); ok {
				if err := a.conn.Update(ctx, req.SessionID, acp.AgentMessage("echo: "+t.Text)); err != nil {
					return nil, err
				}
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	}), nil
}

// In a test, acptest.Connect(t, c, newAgent) does the wiring below and cleans up.
func ExampleClient() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe()
	agent := acp.ServeAgent(ctx, agentEnd, func(cc *acp.ClientConn) acp.Agent { return &echoAgent{conn: cc} })
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
	// client->agent {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hello"}]}}
	// agent->client {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"echo: hello"}}}}
	// agent->client {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
}
