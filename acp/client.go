package acp

import (
	"context"
	"fmt"
	"io"
)

// Client is the client (editor) side of ACP: one method per agent→client method. The
// notification methods (SessionUpdate, CompleteElicitation) run on the read goroutine in
// arrival order, so every update of a turn is handled before the turn's response is
// delivered; they must not block on calls to the agent. Request methods run on their own
// goroutines. Embed [UnimplementedClient] for the methods you do not support.
type Client interface {
	SessionUpdate(ctx context.Context, n *SessionNotification) error
	RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, req *WriteTextFileRequest) (*WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, req *TerminalOutputRequest) (*TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, req *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, req *KillTerminalRequest) (*KillTerminalResponse, error)
	ReleaseTerminal(ctx context.Context, req *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error)
	CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error)
	CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification) error
}

// UnimplementedClient answers every request with -32601 and ignores notifications.
type UnimplementedClient struct{}

func unimplemented[R any](method string) (*R, error) {
	return nil, fmt.Errorf("%w: %s", ErrMethodNotFound, method)
}

func (UnimplementedClient) SessionUpdate(context.Context, *SessionNotification) error { return nil }
func (UnimplementedClient) RequestPermission(context.Context, *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return unimplemented[RequestPermissionResponse](MethodSessionRequestPermission)
}
func (UnimplementedClient) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return unimplemented[ReadTextFileResponse](MethodFSReadTextFile)
}
func (UnimplementedClient) WriteTextFile(context.Context, *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	return unimplemented[WriteTextFileResponse](MethodFSWriteTextFile)
}
func (UnimplementedClient) CreateTerminal(context.Context, *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return unimplemented[CreateTerminalResponse](MethodTerminalCreate)
}
func (UnimplementedClient) TerminalOutput(context.Context, *TerminalOutputRequest) (*TerminalOutputResponse, error) {
	return unimplemented[TerminalOutputResponse](MethodTerminalOutput)
}
func (UnimplementedClient) WaitForTerminalExit(context.Context, *WaitForTerminalExitRequest) (*WaitForTerminalExitResponse, error) {
	return unimplemented[WaitForTerminalExitResponse](MethodTerminalWaitForExit)
}
func (UnimplementedClient) KillTerminal(context.Context, *KillTerminalRequest) (*KillTerminalResponse, error) {
	return unimplemented[KillTerminalResponse](MethodTerminalKill)
}
func (UnimplementedClient) ReleaseTerminal(context.Context, *ReleaseTerminalRequest) (*ReleaseTerminalResponse, error) {
	return unimplemented[ReleaseTerminalResponse](MethodTerminalRelease)
}
func (UnimplementedClient) CreateElicitation(context.Context, *CreateElicitationRequest) (*CreateElicitationResponse, error) {
	return unimplemented[CreateElicitationResponse](MethodElicitationCreate)
}
func (UnimplementedClient) CompleteElicitation(context.Context, *CompleteElicitationNotification) error {
	return nil
}

// clientRoutes returns the routes that dispatch the agent→client methods to cl.
func clientRoutes(cl Client) Router {
	return Router{
		MethodSessionUpdate:            NotificationRoute(cl.SessionUpdate),
		MethodSessionRequestPermission: AsyncRoute(cl.RequestPermission),
		MethodFSReadTextFile:           AsyncRoute(cl.ReadTextFile),
		MethodFSWriteTextFile:          AsyncRoute(cl.WriteTextFile),
		MethodTerminalCreate:           AsyncRoute(cl.CreateTerminal),
		MethodTerminalOutput:           AsyncRoute(cl.TerminalOutput),
		MethodTerminalWaitForExit:      AsyncRoute(cl.WaitForTerminalExit),
		MethodTerminalKill:             AsyncRoute(cl.KillTerminal),
		MethodTerminalRelease:          AsyncRoute(cl.ReleaseTerminal),
		MethodElicitationCreate:        AsyncRoute(cl.CreateElicitation),
		MethodElicitationComplete:      NotificationRoute(cl.CompleteElicitation),
	}
}

// ConnectAgent connects to an agent over rwc (e.g. the pipes of a spawned agent) and serves
// the agent's calls to cl. It returns at once; the connection runs until rwc reaches EOF, ctx
// is cancelled or Close is called.
func ConnectAgent(ctx context.Context, rwc io.ReadWriteCloser, cl Client, opts ...Option) *AgentConn {
	c := newConn(ctx)
	c.start(rwc, clientRoutes(cl), opts)
	return &AgentConn{Conn: c}
}

// AgentConn is the client's connection to the agent: typed methods for every client→agent
// method. Cancelling a call's ctx sends $/cancel_request for it.
type AgentConn struct{ *Conn }

// Initialize negotiates the protocol version and capabilities.
func (c *AgentConn) Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
	return call[InitializeResponse](ctx, c.Conn, MethodInitialize, req)
}

// Authenticate runs an agent-handled auth method.
func (c *AgentConn) Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error) {
	return call[AuthenticateResponse](ctx, c.Conn, MethodAuthenticate, req)
}

// Logout ends the authenticated state.
func (c *AgentConn) Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error) {
	return call[LogoutResponse](ctx, c.Conn, MethodLogout, req)
}

// NewSession creates a session.
func (c *AgentConn) NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error) {
	return call[NewSessionResponse](ctx, c.Conn, MethodSessionNew, req)
}

// LoadSession loads a session; the agent replays its history before answering.
func (c *AgentConn) LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error) {
	return call[LoadSessionResponse](ctx, c.Conn, MethodSessionLoad, req)
}

// ListSessions lists sessions.
func (c *AgentConn) ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error) {
	return call[ListSessionsResponse](ctx, c.Conn, MethodSessionList, req)
}

// ResumeSession resumes a session without replay.
func (c *AgentConn) ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	return call[ResumeSessionResponse](ctx, c.Conn, MethodSessionResume, req)
}

// ForkSession forks a session (UNSTABLE in ACP v1).
func (c *AgentConn) ForkSession(ctx context.Context, req *ForkSessionRequest) (*ForkSessionResponse, error) {
	return call[ForkSessionResponse](ctx, c.Conn, MethodSessionFork, req)
}

// CloseSession closes a session, cancelling its work.
func (c *AgentConn) CloseSession(ctx context.Context, req *CloseSessionRequest) (*CloseSessionResponse, error) {
	return call[CloseSessionResponse](ctx, c.Conn, MethodSessionClose, req)
}

// DeleteSession deletes a session.
func (c *AgentConn) DeleteSession(ctx context.Context, req *DeleteSessionRequest) (*DeleteSessionResponse, error) {
	return call[DeleteSessionResponse](ctx, c.Conn, MethodSessionDelete, req)
}

// SetSessionMode switches the session's mode.
func (c *AgentConn) SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return call[SetSessionModeResponse](ctx, c.Conn, MethodSessionSetMode, req)
}

// SetSessionConfigOption sets a config option and returns the complete list.
func (c *AgentConn) SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return call[SetSessionConfigOptionResponse](ctx, c.Conn, MethodSessionSetConfigOption, req)
}

// Prompt runs one turn; the session/updates of the turn have all been delivered to
// [Client.SessionUpdate] when it returns.
func (c *AgentConn) Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
	return call[PromptResponse](ctx, c.Conn, MethodSessionPrompt, req)
}

// Cancel sends session/cancel.
func (c *AgentConn) Cancel(ctx context.Context, n *CancelNotification) error {
	return c.Notify(ctx, MethodSessionCancel, n)
}
