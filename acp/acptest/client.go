package acptest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// PermissionPolicy decides a session/request_permission. ctx is cancelled if the agent sends
// $/cancel_request for the request; a policy that blocks should then return [acp.Cancelled].
type PermissionPolicy func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome

// AllowOnce picks the first allow_once option (else allow_always, else the first option).
func AllowOnce(_ context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	return pick(req, acp.PermissionAllowOnce, acp.PermissionAllowAlways)
}

// AllowAlways picks the first allow_always option (else allow_once).
func AllowAlways(_ context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	return pick(req, acp.PermissionAllowAlways, acp.PermissionAllowOnce)
}

// RejectOnce picks the first reject_once option (else reject_always).
func RejectOnce(_ context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	return pick(req, acp.PermissionRejectOnce, acp.PermissionRejectAlways)
}

// CancelPermission answers every request with the "cancelled" outcome.
func CancelPermission(context.Context, *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	return acp.Cancelled()
}

// BlockUntilCancelled never decides: it waits for the request to be cancelled and answers
// "cancelled", like a user who walked away.
func BlockUntilCancelled(ctx context.Context, _ *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	<-ctx.Done()
	return acp.Cancelled()
}

func pick(req *acp.RequestPermissionRequest, kinds ...acp.PermissionOptionKind) acp.RequestPermissionOutcome {
	for _, k := range kinds {
		for _, o := range req.Options {
			if o.Kind == k {
				return acp.Selected(o.OptionID)
			}
		}
	}
	if len(req.Options) > 0 {
		return acp.Selected(req.Options[0].OptionID)
	}
	return acp.Cancelled()
}

// ElicitationPolicy answers elicitation/create.
type ElicitationPolicy func(ctx context.Context, req *acp.CreateElicitationRequest) *acp.CreateElicitationResponse

// Client is a scriptable in-process ACP client for tests. Set the policies before serving;
// nil FS and Terminals answer their methods with -32601 (a client that did not advertise
// them), a nil Permission policy is [AllowOnce], a nil Elicit declines. Every message is
// recorded in Recorder, in wire order.
type Client struct {
	Permission PermissionPolicy
	FS         FS
	Terminals  Terminals
	Elicit     ElicitationPolicy
	Recorder   *Recorder

	conn *acp.AgentConn

	mu             sync.Mutex
	updates        []acp.SessionNotification
	updatesChanged chan struct{} // closed at the next session/update
	completions    []string
}

// Serve connects c to an agent over rwc and returns the connection to the agent.
func (c *Client) Serve(ctx context.Context, rwc io.ReadWriteCloser, opts ...acp.Option) *acp.AgentConn {
	if c.Recorder == nil {
		c.Recorder = NewRecorder()
	}
	opts = append([]acp.Option{acp.WithTap(c.Recorder.ClientTap)}, opts...)
	c.conn = acp.ConnectAgent(ctx, rwc, c, opts...)
	return c.conn
}

// Conn is the connection to the agent (nil before Serve).
func (c *Client) Conn() *acp.AgentConn { return c.conn }

// Connect runs an in-process agent with the routes newRoutes returns (see
// [acp.ConnectClient]) and connects c to it over an in-memory pipe. Both ends are closed when
// the test ends.
func Connect(t testing.TB, c *Client, newRoutes func(*acp.ClientConn) acp.Router, opts ...acp.Option) *acp.AgentConn {
	t.Helper()
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	agent := acp.ConnectClient(ctx, agentEnd, newRoutes, opts...)
	conn := c.Serve(ctx, clientEnd, opts...)
	t.Cleanup(func() {
		cancel()
		_ = conn.Close()
		_ = agent.Close()
		<-conn.Done()
		<-agent.Done()
	})
	return conn
}

// Updates returns the session/update notifications received so far, in order.
func (c *Client) Updates() []acp.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.SessionNotification(nil), c.updates...)
}

// CompletedElicitations returns the ids of elicitation/complete notifications received.
func (c *Client) CompletedElicitations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.completions...)
}

// SessionUpdate implements [acp.Client].
func (c *Client) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, *n)
	if c.updatesChanged != nil {
		close(c.updatesChanged)
		c.updatesChanged = nil
	}
	c.mu.Unlock()
	return nil
}

// WaitUpdates waits until the session/update notifications received so far
// satisfy ok, or ctx ends (its error is returned). Each update the client
// handles wakes it: tests wait on it instead of polling [Client.Updates].
func (c *Client) WaitUpdates(ctx context.Context, ok func([]acp.SessionNotification) bool) error {
	for {
		c.mu.Lock()
		got := append([]acp.SessionNotification(nil), c.updates...)
		if c.updatesChanged == nil {
			c.updatesChanged = make(chan struct{})
		}
		changed := c.updatesChanged
		c.mu.Unlock()
		if ok(got) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// RequestPermission implements [acp.Client].
func (c *Client) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	policy := c.Permission
	if policy == nil {
		policy = AllowOnce
	}
	return &acp.RequestPermissionResponse{Outcome: policy(ctx, req)}, nil
}

// CreateElicitation implements [acp.Client].
func (c *Client) CreateElicitation(ctx context.Context, req *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	if c.Elicit == nil {
		return &acp.CreateElicitationResponse{Action: acp.ElicitationDecline}, nil
	}
	return c.Elicit(ctx, req), nil
}

// CompleteElicitation implements [acp.Client].
func (c *Client) CompleteElicitation(_ context.Context, n *acp.CompleteElicitationNotification) error {
	c.mu.Lock()
	c.completions = append(c.completions, n.ElicitationID)
	c.mu.Unlock()
	return nil
}
