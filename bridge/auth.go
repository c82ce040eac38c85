package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dsh-tools/dshd/acp"
)

// Auth lets a loop that needs credentials take part in ACP authentication.
// Without it the bridge advertises no auth methods and refuses
// authenticate.
type Auth struct {
	// Methods are advertised in the initialize response. Terminal methods
	// are advertised only to clients that set auth.terminal.
	Methods []acp.AuthMethod
	// Required, when it returns true, makes session/new, session/load and
	// session/resume fail with -32000 (authentication required).
	Required func() bool
	// Authenticate runs an agent-handled method chosen by the client.
	Authenticate func(ctx context.Context, methodID string) error
	// Logout, when set, is advertised as agentCapabilities.auth.logout.
	Logout func(ctx context.Context) error
}

// authMethods is what initialize advertises, given the client's auth
// capabilities.
func (a *Agent) authMethods(caps acp.ClientCapabilities) []acp.AuthMethod {
	if a.opts.Auth == nil {
		return nil
	}
	// The legacy _meta["terminal-auth"] hint of clients from before
	// auth.terminal (still sent by the ACP Registry's validator) counts too.
	terminal := caps.Auth != nil && caps.Auth.Terminal || legacyTerminalAuth(caps.Meta)
	return slices.DeleteFunc(slices.Clone(a.opts.Auth.Methods), func(m acp.AuthMethod) bool {
		_, isTerminal := m.Value.(*acp.AuthMethodTerminal)
		return isTerminal && !terminal
	})
}

// checkAuth fails session creation while authentication is required.
func (a *Agent) checkAuth() error {
	if au := a.opts.Auth; au != nil && au.Required != nil && au.Required() {
		return acp.ErrAuthRequired
	}
	return nil
}

func (c *conn) authenticate(ctx context.Context, p *acp.AuthenticateRequest) (acp.Reply[acp.AuthenticateResponse], error) {
	au := c.agent.opts.Auth
	if au == nil || au.Authenticate == nil {
		return acp.Reply[acp.AuthenticateResponse]{}, fmt.Errorf("%w: authentication is not needed", acp.ErrMethodNotFound)
	}
	known := false
	for _, m := range au.Methods {
		if a, ok := m.Value.(*acp.AuthMethodAgent); ok && a.ID == p.MethodID {
			known = true
		}
	}
	if !known {
		return acp.Reply[acp.AuthenticateResponse]{}, invalidParams("unknown auth method %q", p.MethodID)
	}
	return acp.Later(func() (*acp.AuthenticateResponse, error) {
		if err := au.Authenticate(ctx, p.MethodID); err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrAuthRequired, err)
		}
		return &acp.AuthenticateResponse{}, nil
	}), nil
}

func (c *conn) logout(ctx context.Context, _ *acp.LogoutRequest) (acp.Reply[acp.LogoutResponse], error) {
	au := c.agent.opts.Auth
	if au == nil || au.Logout == nil {
		return acp.Reply[acp.LogoutResponse]{}, fmt.Errorf("%w: logout is not supported", acp.ErrMethodNotFound)
	}
	return acp.Later(func() (*acp.LogoutResponse, error) {
		if err := au.Logout(ctx); err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
		}
		return &acp.LogoutResponse{}, nil
	}), nil
}

// legacyTerminalAuth reports whether a client's capabilities _meta holds
// "terminal-auth": true.
func legacyTerminalAuth(meta acp.Meta) bool {
	var m struct {
		TerminalAuth bool `json:"terminal-auth"`
	}
	return len(meta) > 0 && json.Unmarshal(meta, &m) == nil && m.TerminalAuth
}
