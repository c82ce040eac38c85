package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"io"
)

// Agent is the agent side of ACP: one method per client→agent method. Every method is called
// on the connection's read goroutine, in arrival order, and must not block: it decodes,
// validates and registers state (a new turn, a mode switch), then returns either [Now] with
// the result or [Later] with a continuation that runs on its own goroutine and produces the
// reply. Calls back to the client ([ClientConn.RequestPermission], fs, terminals) belong in
// the continuation; session/update notifications sent by the continuation before it returns
// reach the wire before the reply.
//
// ctx is cancelled when the client sends $/cancel_request for the request or the connection
// closes; the request is still answered exactly once (return ctx's error for -32800, or a
// result such as stopReason "cancelled").
//
// Embed [UnimplementedAgent] to answer the methods you do not support with -32601.
type Agent interface {
	Initialize(ctx context.Context, req *InitializeRequest) (Reply[InitializeResponse], error)
	Authenticate(ctx context.Context, req *AuthenticateRequest) (Reply[AuthenticateResponse], error)
	Logout(ctx context.Context, req *LogoutRequest) (Reply[LogoutResponse], error)
	NewSession(ctx context.Context, req *NewSessionRequest) (Reply[NewSessionResponse], error)
	LoadSession(ctx context.Context, req *LoadSessionRequest) (Reply[LoadSessionResponse], error)
	ListSessions(ctx context.Context, req *ListSessionsRequest) (Reply[ListSessionsResponse], error)
	ResumeSession(ctx context.Context, req *ResumeSessionRequest) (Reply[ResumeSessionResponse], error)
	CloseSession(ctx context.Context, req *CloseSessionRequest) (Reply[CloseSessionResponse], error)
	DeleteSession(ctx context.Context, req *DeleteSessionRequest) (Reply[DeleteSessionResponse], error)
	SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (Reply[SetSessionModeResponse], error)
	SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (Reply[SetSessionConfigOptionResponse], error)
	Prompt(ctx context.Context, req *PromptRequest) (Reply[PromptResponse], error)
	// Cancel handles the session/cancel notification. It runs on the read goroutine, so it
	// always sees the turn registered by an earlier Prompt.
	Cancel(ctx context.Context, n *CancelNotification) error
}

// UnimplementedAgent answers every method with -32601 (and ignores session/cancel). Embed it
// in an [Agent] implementation and override what you support.
type UnimplementedAgent struct{}

func notImplemented[R any](method string) (Reply[R], error) {
	return Reply[R]{}, fmt.Errorf("%w: %s", ErrMethodNotFound, method)
}

func (UnimplementedAgent) Initialize(context.Context, *InitializeRequest) (Reply[InitializeResponse], error) {
	return notImplemented[InitializeResponse](MethodInitialize)
}
func (UnimplementedAgent) Authenticate(context.Context, *AuthenticateRequest) (Reply[AuthenticateResponse], error) {
	return notImplemented[AuthenticateResponse](MethodAuthenticate)
}
func (UnimplementedAgent) Logout(context.Context, *LogoutRequest) (Reply[LogoutResponse], error) {
	return notImplemented[LogoutResponse](MethodLogout)
}
func (UnimplementedAgent) NewSession(context.Context, *NewSessionRequest) (Reply[NewSessionResponse], error) {
	return notImplemented[NewSessionResponse](MethodSessionNew)
}
func (UnimplementedAgent) LoadSession(context.Context, *LoadSessionRequest) (Reply[LoadSessionResponse], error) {
	return notImplemented[LoadSessionResponse](MethodSessionLoad)
}
func (UnimplementedAgent) ListSessions(context.Context, *ListSessionsRequest) (Reply[ListSessionsResponse], error) {
	return notImplemented[ListSessionsResponse](MethodSessionList)
}
func (UnimplementedAgent) ResumeSession(context.Context, *ResumeSessionRequest) (Reply[ResumeSessionResponse], error) {
	return notImplemented[ResumeSessionResponse](MethodSessionResume)
}
func (UnimplementedAgent) CloseSession(context.Context, *CloseSessionRequest) (Reply[CloseSessionResponse], error) {
	return notImplemented[CloseSessionResponse](MethodSessionClose)
}
func (UnimplementedAgent) DeleteSession(context.Context, *DeleteSessionRequest) (Reply[DeleteSessionResponse], error) {
	return notImplemented[DeleteSessionResponse](MethodSessionDelete)
}
func (UnimplementedAgent) SetSessionMode(context.Context, *SetSessionModeRequest) (Reply[SetSessionModeResponse], error) {
	return notImplemented[SetSessionModeResponse](MethodSessionSetMode)
}
func (UnimplementedAgent) SetSessionConfigOption(context.Context, *SetSessionConfigOptionRequest) (Reply[SetSessionConfigOptionResponse], error) {
	return notImplemented[SetSessionConfigOptionResponse](MethodSessionSetConfigOption)
}
func (UnimplementedAgent) Prompt(context.Context, *PromptRequest) (Reply[PromptResponse], error) {
	return notImplemented[PromptResponse](MethodSessionPrompt)
}
func (UnimplementedAgent) Cancel(context.Context, *CancelNotification) error { return nil }

// AgentRoutes returns the routes that dispatch the client→agent methods to a.
func AgentRoutes(a Agent) Router {
	return Router{
		MethodInitialize:             StagedRoute(a.Initialize),
		MethodAuthenticate:           StagedRoute(a.Authenticate),
		MethodLogout:                 StagedRoute(a.Logout),
		MethodSessionNew:             StagedRoute(a.NewSession),
		MethodSessionLoad:            StagedRoute(a.LoadSession),
		MethodSessionList:            StagedRoute(a.ListSessions),
		MethodSessionResume:          StagedRoute(a.ResumeSession),
		MethodSessionClose:           StagedRoute(a.CloseSession),
		MethodSessionDelete:          StagedRoute(a.DeleteSession),
		MethodSessionSetMode:         StagedRoute(a.SetSessionMode),
		MethodSessionSetConfigOption: StagedRoute(a.SetSessionConfigOption),
		MethodSessionPrompt:          StagedRoute(a.Prompt),
		MethodSessionCancel:          NotificationRoute(a.Cancel),
	}
}

// ServeAgent serves the agent side of ACP over rwc (the process's stdin/stdout, or a pipe).
// newAgent receives the connection to the client before the first message is read, so the
// agent can keep it for session updates and client calls. It returns at once; wait on
// [Conn.Done] for the client to disconnect.
func ServeAgent(ctx context.Context, rwc io.ReadWriteCloser, newAgent func(*ClientConn) Agent, opts ...Option) *ClientConn {
	c := newConn(ctx, rwc, opts...)
	cc := &ClientConn{Conn: c}
	c.start(AgentRoutes(newAgent(cc)))
	return cc
}

// ClientConn is the agent's connection to the client: typed methods for every agent→client
// method. Calls block until the client answers or ctx is cancelled (which sends
// $/cancel_request). Never call them from an [Agent] method's synchronous part, only from
// its [Later] continuation or another goroutine.
type ClientConn struct{ *Conn }

// SessionUpdate sends a session/update notification.
func (c *ClientConn) SessionUpdate(ctx context.Context, n *SessionNotification) error {
	return c.Notify(ctx, MethodSessionUpdate, n)
}

// SessionUpdateRaw sends a session/update notification whose params (a SessionNotification)
// are already JSON, as encoding/json or this package writes it; see [Conn.NotifyRaw].
func (c *ClientConn) SessionUpdateRaw(ctx context.Context, params json.RawMessage) error {
	return c.NotifyRaw(ctx, MethodSessionUpdate, params)
}

// UpdateRaw sends a session/update for session sessionID whose update (a [SessionUpdate]) is
// already JSON, e.g. encoded once for a durable log and the wire, or read back from that log.
// The params object is built around it directly in the outgoing message, so the update is
// copied once and neither decoded nor re-validated: it must be valid JSON as encoding/json
// writes it (see [Conn.NotifyRaw]).
func (c *ClientConn) UpdateRaw(ctx context.Context, sessionID string, update json.RawMessage) error {
	buf := getBuf()
	b := append(*buf, `{"jsonrpc":"2.0","method":"`+MethodSessionUpdate+`","params":{"sessionId":`...)
	b = jsonscan.AppendString(b, sessionID)
	b = append(b, `,"update":`...)
	b, err := appendTrustedRaw(b, update)
	if err != nil {
		putBuf(buf)
		return fmt.Errorf("acp: %s: %w", MethodSessionUpdate, err)
	}
	*buf = append(b, '}', '}', '\n')
	if err := c.send(buf); err != nil {
		return fmt.Errorf("acp: %s: %w", MethodSessionUpdate, err)
	}
	return nil
}

// Update is SessionUpdate for one update of session sessionID.
func (c *ClientConn) Update(ctx context.Context, sessionID string, u SessionUpdate) error {
	return c.SessionUpdate(ctx, &SessionNotification{SessionID: sessionID, Update: u})
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
