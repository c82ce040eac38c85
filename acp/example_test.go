package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"

	"github.com/dsh-tools/dshd/acp"
)

// greeter's routes are a minimal agent. Start functions run on the read goroutine in arrival
// order; the prompt turn is registered there and runs on its own goroutine (acp.Later), where
// it may call the client.
func greeter(client *acp.ClientConn) acp.Router {
	return acp.Router{
		acp.MethodInitialize: acp.SyncRoute(func(_ context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
			return &acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1}, nil
		}),
		acp.MethodSessionNew: acp.SyncRoute(func(context.Context, *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
			return &acp.NewSessionResponse{SessionID: "s1"}, nil
		}),
		acp.MethodSessionPrompt: acp.StagedRoute(func(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
			if len(req.Prompt) == 0 {
				return acp.Reply[acp.PromptResponse]{}, fmt.Errorf("%w: empty prompt", acp.ErrInvalidParams)
			}
			return acp.Later(func() (*acp.PromptResponse, error) {
				n := &acp.SessionNotification{SessionID: req.SessionID, Update: acp.AgentMessage("Hello!")}
				if err := client.SessionUpdate(ctx, n); err != nil {
					return nil, err
				}
				return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil // after the update, on the wire
			}), nil
		}),
	}
}

// printer is a client that prints what it receives.
type printer struct{ acp.UnimplementedClient }

func (printer) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	if chunk, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
		fmt.Println("agent says:", chunk.Content.Value.(*acp.TextContent).Text)
	}
	return nil
}

// An agent is a Router served with ConnectClient; a Go client is an acp.Client served with
// ConnectAgent. A real agent serves acp.Stdio(os.Stdin, os.Stdout).
func Example() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe()
	agent := acp.ConnectClient(ctx, agentEnd, greeter)
	defer agent.Close()
	conn := acp.ConnectAgent(ctx, clientEnd, printer{})
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

// An update encoded once (for a durable log, say) is sent as it is, inside params that hold it
// as a json.RawMessage: it is copied, not decoded and re-encoded.
func ExampleConn_Notify() {
	ctx := context.Background()
	agentEnd, clientEnd := net.Pipe()
	client := acp.ConnectClient(ctx, agentEnd, func(*acp.ClientConn) acp.Router { return nil })
	conn := acp.ConnectAgent(ctx, clientEnd, printer{})
	defer conn.Close()

	logged, _ := json.Marshal(acp.AgentMessage("Hello again!")) // as stored in the session log
	params := struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}{"s1", logged}
	if err := client.Notify(ctx, acp.MethodSessionUpdate, params); err != nil {
		fmt.Println(err)
	}
	_ = client.Close() // the client reads the update before it sees the end of the stream
	<-conn.Done()
	// Output: agent says: Hello again!
}
