package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Agent methods (client→agent).
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionList            = "session/list"
	MethodSessionResume          = "session/resume"
	MethodSessionFork            = "session/fork" // UNSTABLE: schema.unstable.json
	MethodSessionClose           = "session/close"
	MethodSessionDelete          = "session/delete"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel" // notification
)

// Client methods (agent→client).
const (
	MethodSessionUpdate            = "session/update" // notification
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
	MethodElicitationCreate        = "elicitation/create"
	MethodElicitationComplete      = "elicitation/complete" // notification
)

// MethodCancelRequest is the protocol-level notification that cancels a pending request, in
// either direction.
const MethodCancelRequest = "$/cancel_request"

// RequestID is a JSON-RPC request id (integer, string or null), kept as its raw JSON text so
// it can be echoed byte for byte.
type RequestID json.RawMessage

// IntRequestID returns the id n.
func IntRequestID(n int64) RequestID { return RequestID(strconv.AppendInt(nil, n, 10)) }

// String returns the id's JSON text.
func (id RequestID) String() string { return string(id) }

// MarshalJSON implements [json.Marshaler]; an empty id marshals as null.
func (id RequestID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return id, nil
}

// UnmarshalJSON implements [json.Unmarshaler]; it accepts integers, strings and null.
func (id *RequestID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("acp: empty request id")
	}
	switch data[0] {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("acp: request id: %w", err)
		}
	case 'n':
		if string(data) != "null" {
			return fmt.Errorf("acp: invalid request id %s", data)
		}
	default:
		if _, err := strconv.ParseInt(string(data), 10, 64); err != nil {
			return fmt.Errorf("acp: request id must be an integer or a string: %s", data)
		}
	}
	*id = append((*id)[:0], data...)
	return nil
}

// StopReason says why a prompt turn ended. There is no "error": failures are JSON-RPC errors.
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// --- initialize, authenticate, logout ---

// InitializeRequest is the params of initialize.
type InitializeRequest struct {
	ProtocolVersion    ProtocolVersion     `json:"protocolVersion"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	Meta               Meta                `json:"_meta,omitempty"`
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   ProtocolVersion    `json:"protocolVersion"`
	AgentCapabilities *AgentCapabilities `json:"agentCapabilities,omitempty"`
	AuthMethods       []AuthMethod       `json:"authMethods,omitempty"`
	AgentInfo         *Implementation    `json:"agentInfo,omitempty"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// AuthenticateRequest is the params of authenticate.
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// AuthenticateResponse is the result of authenticate ({}).
type AuthenticateResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// LogoutRequest is the params of logout.
type LogoutRequest struct {
	Meta Meta `json:"_meta,omitempty"`
}

// LogoutResponse is the result of logout ({}).
type LogoutResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// --- sessions ---

// NewSessionRequest is the params of session/new.
type NewSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	MCPServers            []MCPServer `json:"mcpServers"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil MCPServers marshal as [].
func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type plain NewSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load.
type LoadSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	MCPServers            []MCPServer `json:"mcpServers"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil MCPServers marshal as [].
func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type plain LoadSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// LoadSessionResponse is the result of session/load: an object (often {}), never null.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume; MCPServers is optional here.
type ResumeSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	MCPServers            []MCPServer `json:"mcpServers,omitzero"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of session/resume.
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ForkSessionRequest is the params of session/fork (UNSTABLE in ACP v1:
// schema.unstable.json, gated by sessionCapabilities.fork).
type ForkSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer `json:"mcpServers,omitzero"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// ForkSessionResponse is the result of session/fork: the new session.
type ForkSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of session/list.
type ListSessionsRequest struct {
	Cwd    *string `json:"cwd,omitempty"`
	Cursor *string `json:"cursor,omitempty"`
	Meta   Meta    `json:"_meta,omitempty"`
}

// SessionInfo describes a listed session.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 *string  `json:"title,omitempty"`
	UpdatedAt             *string  `json:"updatedAt,omitempty"`
	Meta                  Meta     `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list; NextCursor nil means the last page.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor *string       `json:"nextCursor,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil Sessions marshal as [].
func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResponse
	r.Sessions = nonNil(r.Sessions)
	return json.Marshal(plain(r))
}

// CloseSessionRequest is the params of session/close.
type CloseSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// CloseSessionResponse is the result of session/close ({}).
type CloseSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of session/delete.
type DeleteSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// DeleteSessionResponse is the result of session/delete ({}).
type DeleteSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionModeResponse is the result of session/set_mode ({}).
type SetSessionModeResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ConfigValue is the value of a set_config_option request: a value id for select options,
// or a boolean (Bool non-nil), which goes out with "type":"boolean".
type ConfigValue struct {
	ID   string
	Bool *bool
}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
type SetSessionConfigOptionRequest struct {
	SessionID string
	ConfigID  string
	Value     ConfigValue
	Meta      Meta
}

type setConfigOptionWire struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler].
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	w := setConfigOptionWire{SessionID: r.SessionID, ConfigID: r.ConfigID, Meta: r.Meta}
	var err error
	if r.Value.Bool != nil {
		w.Type = "boolean"
		w.Value, err = json.Marshal(*r.Value.Bool)
	} else {
		w.Value, err = json.Marshal(r.Value.ID)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON implements [json.Unmarshaler]. It is lenient: a JSON boolean value is taken
// as a boolean even without "type":"boolean" (the schema requires the type; clients forget).
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(data []byte) error {
	var w setConfigOptionWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = SetSessionConfigOptionRequest{SessionID: w.SessionID, ConfigID: w.ConfigID, Meta: w.Meta}
	v := bytes.TrimSpace(w.Value)
	switch {
	case len(v) == 0:
		return fmt.Errorf("acp: set_config_option: missing value")
	case v[0] == 't' || v[0] == 'f':
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("acp: set_config_option value: %w", err)
		}
		r.Value.Bool = &b
	default:
		if err := json.Unmarshal(v, &r.Value.ID); err != nil {
			return fmt.Errorf("acp: set_config_option value must be a string or a boolean: %w", err)
		}
	}
	return nil
}

// SetSessionConfigOptionResponse is the result of session/set_config_option: the complete list.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil ConfigOptions marshal as [].
func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type plain SetSessionConfigOptionResponse
	r.ConfigOptions = nonNil(r.ConfigOptions)
	return json.Marshal(plain(r))
}

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil Prompt marshals as [].
func (r PromptRequest) MarshalJSON() ([]byte, error) {
	type plain PromptRequest
	r.Prompt = nonNil(r.Prompt)
	return json.Marshal(plain(r))
}

// PromptResponse is the result of session/prompt.
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// CancelNotification is the params of session/cancel.
type CancelNotification struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request.
type CancelRequestNotification struct {
	RequestID RequestID `json:"requestId"`
	Meta      Meta      `json:"_meta,omitempty"`
}

// --- permission ---

// PermissionOptionKind is a UI hint for a permission option.
type PermissionOptionKind string

const (
	PermissionAllowOnce    PermissionOptionKind = "allow_once"
	PermissionAllowAlways  PermissionOptionKind = "allow_always"
	PermissionRejectOnce   PermissionOptionKind = "reject_once"
	PermissionRejectAlways PermissionOptionKind = "reject_always"
)

// PermissionOption is one choice offered to the user.
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     Meta                 `json:"_meta,omitempty"`
}

// RequestPermissionRequest is the params of session/request_permission.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil Options marshal as [].
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type plain RequestPermissionRequest
	r.Options = nonNil(r.Options)
	return json.Marshal(plain(r))
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome RequestPermissionOutcome `json:"outcome"`
	Meta    Meta                     `json:"_meta,omitempty"`
}

// RequestPermissionOutcome is the "outcome"-tagged union. Value is *PermissionSelected,
// *PermissionCancelled or *UnknownPermissionOutcome.
type RequestPermissionOutcome struct{ Value PermissionOutcomeVariant }

// PermissionOutcomeVariant is a member of [RequestPermissionOutcome].
type PermissionOutcomeVariant interface {
	variant
	isPermissionOutcome()
}

// PermissionSelected: the user picked OptionID.
type PermissionSelected struct {
	OptionID string `json:"optionId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// PermissionCancelled: the turn is being cancelled; do not run the tool.
type PermissionCancelled struct{}

// UnknownPermissionOutcome is an outcome with an unknown tag, kept verbatim in Raw. Treat it
// as a refusal.
type UnknownPermissionOutcome struct {
	Outcome string
	Raw     json.RawMessage
}

func (*PermissionSelected) wireTag() string              { return "selected" }
func (*PermissionCancelled) wireTag() string             { return "cancelled" }
func (u *UnknownPermissionOutcome) wireTag() string      { return u.Outcome }
func (u *UnknownPermissionOutcome) raw() json.RawMessage { return u.Raw }
func (*PermissionSelected) isPermissionOutcome()         {}
func (*PermissionCancelled) isPermissionOutcome()        {}
func (*UnknownPermissionOutcome) isPermissionOutcome()   {}

var permissionOutcomeVariants = map[string]func() PermissionOutcomeVariant{
	"selected":  func() PermissionOutcomeVariant { return new(PermissionSelected) },
	"cancelled": func() PermissionOutcomeVariant { return new(PermissionCancelled) },
}

// MarshalJSON implements [json.Marshaler].
func (o RequestPermissionOutcome) MarshalJSON() ([]byte, error) {
	return marshalTagged("outcome", "RequestPermissionOutcome", o.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (o *RequestPermissionOutcome) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "outcome", "RequestPermissionOutcome", permissionOutcomeVariants,
		func(tag string, raw json.RawMessage) PermissionOutcomeVariant {
			return &UnknownPermissionOutcome{Outcome: tag, Raw: raw}
		}, &o.Value)
}

// Selected returns the outcome "the user picked optionID".
func Selected(optionID string) RequestPermissionOutcome {
	return RequestPermissionOutcome{&PermissionSelected{OptionID: optionID}}
}

// Cancelled returns the "cancelled" outcome.
func Cancelled() RequestPermissionOutcome { return RequestPermissionOutcome{&PermissionCancelled{}} }

// SelectedOption returns the picked option id, or "" and false for any other outcome.
func (o RequestPermissionOutcome) SelectedOption() (string, bool) {
	if s, ok := o.Value.(*PermissionSelected); ok && s != nil {
		return s.OptionID, true
	}
	return "", false
}

// --- fs ---

// ReadTextFileRequest is the params of fs/read_text_file (Line is 1-based).
type ReadTextFileRequest struct {
	SessionID string  `json:"sessionId"`
	Path      string  `json:"path"`
	Line      *uint32 `json:"line,omitempty"`
	Limit     *uint32 `json:"limit,omitempty"`
	Meta      Meta    `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of fs/read_text_file.
type ReadTextFileResponse struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file.
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the result of fs/write_text_file ({}; null is accepted too).
type WriteTextFileResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// --- terminals ---

// CreateTerminalRequest is the params of terminal/create.
type CreateTerminalRequest struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args,omitempty"`
	Env             []EnvVariable `json:"env,omitempty"`
	Cwd             *string       `json:"cwd,omitempty"`
	OutputByteLimit *uint64       `json:"outputByteLimit,omitempty"`
	Meta            Meta          `json:"_meta,omitempty"`
}

// CreateTerminalResponse is the result of terminal/create.
type CreateTerminalResponse struct {
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// TerminalRequest is the params of terminal/output, wait_for_exit, kill and release.
type TerminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// Per-method names for the shared terminal params shape.
type (
	TerminalOutputRequest      = TerminalRequest
	WaitForTerminalExitRequest = TerminalRequest
	KillTerminalRequest        = TerminalRequest
	ReleaseTerminalRequest     = TerminalRequest
)

// TerminalExitStatus is how a terminal's command ended.
type TerminalExitStatus struct {
	ExitCode *uint32 `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// TerminalOutputResponse is the result of terminal/output.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       Meta                `json:"_meta,omitempty"`
}

// WaitForTerminalExitResponse is the result of terminal/wait_for_exit.
type WaitForTerminalExitResponse struct {
	ExitCode *uint32 `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// KillTerminalResponse is the result of terminal/kill ({}).
type KillTerminalResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ReleaseTerminalResponse is the result of terminal/release ({}).
type ReleaseTerminalResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}
