package acp

import (
	"context"
	"io"
)

// ConnectClient connects an agent to its client over rwc (the process's stdin and stdout, see
// [Stdio]) and returns the connection to the client. newRoutes receives that connection before
// the first message is read, so the agent's handlers can keep it for session updates and calls
// back to the client, and returns the agent's [Router]. ConnectClient returns at once; the
// connection runs until rwc reaches EOF, ctx is cancelled or Close is called.
func ConnectClient(ctx context.Context, rwc io.ReadWriteCloser, newRoutes func(*ClientConn) Router, opts ...Option) *ClientConn {
	cc := &ClientConn{Conn: newConn(ctx)}
	cc.start(rwc, newRoutes(cc), opts)
	return cc
}

// ClientConn is the agent's connection to the client: typed methods for every agent→client
// method. Calls block until the client answers or ctx is cancelled (which sends
// $/cancel_request). Never call them from a route's start function (it runs on the read
// goroutine, which must read the answer), only from a [Later] continuation, an [AsyncRoute]
// handler or another goroutine.
type ClientConn struct{ *Conn }

// SessionUpdate sends a session/update notification. An update that is already JSON (one
// read back from a session log, say) goes out through [Conn.Notify] with params such as
// struct{SessionID string `json:"sessionId"`; Update json.RawMessage `json:"update"`}.
func (c *ClientConn) SessionUpdate(ctx context.Context, n *SessionNotification) error {
	return c.Notify(ctx, MethodSessionUpdate, n)
}

// RequestPermission asks the user to approve a tool call.
func (c *ClientConn) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return call[RequestPermissionResponse](ctx, c.Conn, MethodSessionRequestPermission, req)
}

// ReadTextFile reads a file through the client (gate: fs.readTextFile).
func (c *ClientConn) ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return call[ReadTextFileResponse](ctx, c.Conn, MethodFSReadTextFile, req)
}

// WriteTextFile writes a file through the client (gate: fs.writeTextFile).
func (c *ClientConn) WriteTextFile(ctx context.Context, req *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	return call[WriteTextFileResponse](ctx, c.Conn, MethodFSWriteTextFile, req)
}

// CreateTerminal starts a command in a client terminal (gate: terminal). Always release it.
func (c *ClientConn) CreateTerminal(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return call[CreateTerminalResponse](ctx, c.Conn, MethodTerminalCreate, req)
}

// TerminalOutput returns a terminal's output so far.
func (c *ClientConn) TerminalOutput(ctx context.Context, req *TerminalOutputRequest) (*TerminalOutputResponse, error) {
	return call[TerminalOutputResponse](ctx, c.Conn, MethodTerminalOutput, req)
}

// WaitForTerminalExit waits for a terminal's command to exit.
func (c *ClientConn) WaitForTerminalExit(ctx context.Context, req *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error) {
	return call[WaitForTerminalExitResponse](ctx, c.Conn, MethodTerminalWaitForExit, req)
}

// KillTerminal kills a terminal's command; the terminal must still be released.
func (c *ClientConn) KillTerminal(ctx context.Context, req *KillTerminalRequest) (*KillTerminalResponse, error) {
	return call[KillTerminalResponse](ctx, c.Conn, MethodTerminalKill, req)
}

// ReleaseTerminal kills the command if running and frees the terminal.
func (c *ClientConn) ReleaseTerminal(ctx context.Context, req *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error) {
	return call[ReleaseTerminalResponse](ctx, c.Conn, MethodTerminalRelease, req)
}

// CreateElicitation asks the user for structured input (gate: elicitation.form / .url).
func (c *ClientConn) CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error) {
	return call[CreateElicitationResponse](ctx, c.Conn, MethodElicitationCreate, req)
}

// CompleteElicitation tells the client a URL-mode elicitation finished.
func (c *ClientConn) CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification) error {
	return c.Notify(ctx, MethodElicitationComplete, n)
}

func call[R any](ctx context.Context, c *Conn, method string, params any) (*R, error) {
	r := new(R)
	if err := c.Call(ctx, method, params, r); err != nil {
		return nil, err
	}
	return r, nil
}
