package acp

import (
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the ACP major version, an integer on the wire.
type ProtocolVersion uint16

// ProtocolVersion1 is the version this package speaks.
const ProtocolVersion1 ProtocolVersion = 1

// Capability is an object-shaped support marker: present ({}) means supported, absent (nil)
// means not. Several capabilities are objects rather than booleans; sending true is invalid.
type Capability struct {
	Meta Meta `json:"_meta,omitempty"`
}

// Implementation names a client or agent program.
type Implementation struct {
	Name    string  `json:"name"`
	Version string  `json:"version"`
	Title   *string `json:"title,omitempty"`
	Meta    Meta    `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports. Omitted means unsupported.
type ClientCapabilities struct {
	FS          *FileSystemCapabilities    `json:"fs,omitempty"`
	Terminal    bool                       `json:"terminal,omitempty"`
	Session     *ClientSessionCapabilities `json:"session,omitempty"`
	Auth        *AuthCapabilities          `json:"auth,omitempty"`
	Elicitation *ElicitationCapabilities   `json:"elicitation,omitempty"`
	Meta        Meta                       `json:"_meta,omitempty"`
}

// FileSystemCapabilities gates the fs/* client methods.
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
	Meta          Meta `json:"_meta,omitempty"`
}

// ClientSessionCapabilities gates optional session features on the client side.
type ClientSessionCapabilities struct {
	Compaction    *Capability                       `json:"compaction,omitempty"`
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	Notices       *Capability                       `json:"notices,omitempty"`
	Meta          Meta                              `json:"_meta,omitempty"`
}

// SessionConfigOptionsCapabilities: Boolean non-nil allows boolean config options.
type SessionConfigOptionsCapabilities struct {
	Boolean *Capability `json:"boolean,omitempty"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// AuthCapabilities: Terminal allows terminal auth methods.
type AuthCapabilities struct {
	Terminal bool `json:"terminal,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// ElicitationCapabilities: a mode is supported only when its field is non-nil.
type ElicitationCapabilities struct {
	Form *Capability `json:"form,omitempty"`
	URL  *Capability `json:"url,omitempty"`
	Meta Meta        `json:"_meta,omitempty"`
}

// AgentCapabilities is what the agent supports. Omitted means unsupported.
type AgentCapabilities struct {
	LoadSession         bool                   `json:"loadSession,omitempty"`
	PromptCapabilities  *PromptCapabilities    `json:"promptCapabilities,omitempty"`
	MCPCapabilities     *MCPCapabilities       `json:"mcpCapabilities,omitempty"`
	SessionCapabilities *SessionCapabilities   `json:"sessionCapabilities,omitempty"`
	Auth                *AgentAuthCapabilities `json:"auth,omitempty"`
	Meta                Meta                   `json:"_meta,omitempty"`
}

// PromptCapabilities lists the prompt content block types beyond text and resource_link.
type PromptCapabilities struct {
	Image           bool `json:"image,omitempty"`
	Audio           bool `json:"audio,omitempty"`
	EmbeddedContext bool `json:"embeddedContext,omitempty"`
	Meta            Meta `json:"_meta,omitempty"`
}

// MCPCapabilities lists MCP transports beyond stdio (always supported).
type MCPCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
	Meta Meta `json:"_meta,omitempty"`
}

// SessionCapabilities gates optional session methods. Each is an object marker.
type SessionCapabilities struct {
	List                  *Capability `json:"list,omitempty"`
	Delete                *Capability `json:"delete,omitempty"`
	AdditionalDirectories *Capability `json:"additionalDirectories,omitempty"`
	Resume                *Capability `json:"resume,omitempty"`
	Close                 *Capability `json:"close,omitempty"`
	// Fork advertises session/fork (UNSTABLE in ACP v1).
	Fork *Capability `json:"fork,omitempty"`
	Meta Meta        `json:"_meta,omitempty"`
}

// AgentAuthCapabilities: Logout non-nil advertises the logout method.
type AgentAuthCapabilities struct {
	Logout *Capability `json:"logout,omitempty"`
	Meta   Meta        `json:"_meta,omitempty"`
}

// AuthMethod is an authentication method the agent offers. Value is *AuthMethodAgent (no
// "type" key in v1), *AuthMethodTerminal ("terminal", only if the client set
// auth.terminal) or *UnknownAuthMethod.
type AuthMethod struct{ Value AuthMethodVariant }

// AuthMethodVariant is a member of [AuthMethod].
type AuthMethodVariant interface {
	variant
	isAuthMethod()
}

// AuthMethodAgent is an agent-handled method, selected with authenticate.
type AuthMethodAgent struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// AuthMethodTerminal asks the client to rerun the agent with Args and Env for a login flow.
type AuthMethodTerminal struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description *string           `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// UnknownAuthMethod is a method with an unknown type, kept verbatim in Raw.
type UnknownAuthMethod struct {
	Type string
	Raw  json.RawMessage
}

func (*AuthMethodAgent) wireTag() string          { return "agent" }
func (*AuthMethodTerminal) wireTag() string       { return "terminal" }
func (u *UnknownAuthMethod) wireTag() string      { return u.Type }
func (u *UnknownAuthMethod) raw() json.RawMessage { return u.Raw }
func (*AuthMethodAgent) isAuthMethod()            {}
func (*AuthMethodTerminal) isAuthMethod()         {}
func (*UnknownAuthMethod) isAuthMethod()          {}

var authMethodVariants = map[string]func() AuthMethodVariant{
	"agent":    func() AuthMethodVariant { return new(AuthMethodAgent) },
	"terminal": func() AuthMethodVariant { return new(AuthMethodTerminal) },
}

// MarshalJSON implements [json.Marshaler]. An agent method is written without "type".
func (m AuthMethod) MarshalJSON() ([]byte, error) {
	if a, ok := m.Value.(*AuthMethodAgent); ok && a != nil {
		return json.Marshal(a)
	}
	return marshalTagged("type", "AuthMethod", m.Value)
}

// UnmarshalJSON implements [json.Unmarshaler]. No "type" key means an agent method.
func (m *AuthMethod) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	if _, typed, err := lookupKey(data, "type"); err != nil {
		return fmt.Errorf("acp: decoding AuthMethod: %w", err)
	} else if !typed {
		a := new(AuthMethodAgent)
		if err := json.Unmarshal(data, a); err != nil {
			return fmt.Errorf("acp: decoding AuthMethod: %w", err)
		}
		m.Value = a
		return nil
	}
	return unmarshalTagged(data, "type", "AuthMethod", authMethodVariants,
		func(tag string, raw json.RawMessage) AuthMethodVariant {
			return &UnknownAuthMethod{Type: tag, Raw: raw}
		}, &m.Value)
}
