package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"

	"github.com/dsh-tools/dshd/acp"
)

// greeter is a minimal agent. Each method runs on the read goroutine; Prompt registers the turn
// there and streams its reply from a goroutine (acp.Later), so it may call the client.
type greeter struct {
	acp.UnimplementedAgent
	client *acp.ClientConn
}

func (g *greeter) Initialize(_ context.Context, req *acp.InitializeRequest) (acp.Reply[acp.InitializeResponse], error) {
	return acp.Now(&acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1,
		AgentCapabilities: &acp.AgentCapabilities{SessionCapabilities: &acp.SessionCapabilities{Close: &acp.Capability{}}}}), nil
}

func (g *greeter) NewSession(context.Context, *acp.NewSessionRequest) (acp.Reply[acp.NewSessionResponse], error) {
	return acp.Now(&acp.NewSessionResponse{SessionID: "s1"}), nil
}

func (g *greeter) Prompt(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
	if len(req.Prompt) == 0 {
		return acp.Reply[acp.PromptResponse]{}, fmt.Errorf("%w: empty prompt", acp.ErrInvalidParams)
	}
	return acp.Later(func() (*acp.PromptResponse, error) {
		if err := g.client.Update(ctx, req.SessionID, acp.AgentMessage("Hello!")); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil // after the update, on the wire
	}), nil
}

// printer is a client that prints what it receives.
type printer struct{ acp.UnimplementedClient }

func (printer) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	if chunk, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
		fmt.Println("agent says:", chunk.Content.Value.(*acp.TextContent).Text)
	}
	return nil
}

func ExampleServeAgent() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe() // a real agent uses os.Stdin/os.Stdout
	agent := acp.ServeAgent(ctx, agentEnd, func(c *acp.ClientConn) acp.Agent { return &greeter{client: c} })
	defer agent.Close()
	conn := acp.ServeClient(ctx, clientEnd, func(*acp.AgentConn) acp.Client { return printer{} })
	defer conn.Close()

	init, _ := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1})
	fmt.Println("protocol", init.ProtocolVersion)
	sess, _ := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/work"})
	resp, _ := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("hi")}})
	fmt.Println("stop:", resp.StopReason)
	_, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID})
	fmt.Println("error:", err)
	_, err = conn.ListSessions(ctx, &acp.ListSessionsRequest{})
	fmt.Println("error:", err)
	// Output:
	// protocol 1
	// agent says: Hello!
	// stop: end_turn
	// error: invalid params: empty prompt
	// error: method not found: session/list
}

// An update encoded once (for a durable log, say) is sent as it is: UpdateRaw builds the
// session/update params around it in the outgoing line, without decoding or re-encoding it.
func ExampleClientConn_UpdateRaw() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe()
	var client *acp.ClientConn
	agent := acp.ServeAgent(ctx, agentEnd, func(c *acp.ClientConn) acp.Agent { client = c; return acp.UnimplementedAgent{} })
	defer agent.Close()
	conn := acp.ServeClient(ctx, clientEnd, func(*acp.AgentConn) acp.Client { return printer{} })
	defer conn.Close()

	logged, _ := json.Marshal(acp.AgentMessage("Hello again!")) // as stored in the session log
	if err := client.UpdateRaw(ctx, "s1", logged); err != nil {
		fmt.Println(err)
	}
	_ = agent.Close() // the client reads the update before it sees the end of the stream
	<-conn.Done()
	// Output: agent says: Hello again!
}
