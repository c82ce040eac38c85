package acp

import (
	"encoding/json"
)

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
	Meta      Meta          `json:"_meta,omitempty"`
}

// SessionUpdate is the "sessionUpdate"-tagged union streamed to the client. Value is one of
// *UserMessageChunk, *AgentMessageChunk, *AgentThoughtChunk, *ToolCall, *ToolCallUpdate, *Plan,
// *AvailableCommandsUpdate, *CurrentModeUpdate, *ConfigOptionUpdate, *SessionInfoUpdate,
// *UsageUpdate, *Notice, *CompactionUpdate, *CompactionSummaryChunk or *UnknownSessionUpdate.
// Notice and the compaction updates may only be sent to clients that advertised
// clientCapabilities.session.notices / .compaction.
type SessionUpdate struct{ Value SessionUpdateVariant }

// SessionUpdateVariant is a member of [SessionUpdate].
type SessionUpdateVariant interface {
	variant
	isSessionUpdate()
}

// UserMessageChunk streams part of the user's message (used when replaying a session).
type UserMessageChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID *string      `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// AgentMessageChunk streams part of the agent's reply.
type AgentMessageChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID *string      `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// AgentThoughtChunk streams part of the agent's reasoning.
type AgentThoughtChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID *string      `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// PlanEntryPriority is a plan entry's importance.
type PlanEntryPriority string

const (
	PlanPriorityHigh   PlanEntryPriority = "high"
	PlanPriorityMedium PlanEntryPriority = "medium"
	PlanPriorityLow    PlanEntryPriority = "low"
)

// PlanEntryStatus is a plan entry's progress.
type PlanEntryStatus string

const (
	PlanEntryPending    PlanEntryStatus = "pending"
	PlanEntryInProgress PlanEntryStatus = "in_progress"
	PlanEntryCompleted  PlanEntryStatus = "completed"
)

// PlanEntry is one task of a [Plan].
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     Meta              `json:"_meta,omitempty"`
}

// Plan is the "plan" update: always the complete plan, which replaces the client's.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// AvailableCommand is a slash command the agent offers (Name without the slash).
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        Meta                   `json:"_meta,omitempty"`
}

// AvailableCommandInput describes a command's free-text argument.
type AvailableCommandInput struct {
	Hint string `json:"hint"`
	Meta Meta   `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate replaces the client's list of slash commands.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// CurrentModeUpdate reports a mode switch made by the agent. The key is currentModeId, not
// modeId (the docs' example is wrong).
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ConfigOptionUpdate carries the complete current list of config options.
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// SessionInfoUpdate changes session metadata: absent = unchanged, null = clear.
type SessionInfoUpdate struct {
	Title     Optional[string] `json:"title,omitzero"`
	UpdatedAt Optional[string] `json:"updatedAt,omitzero"`
	Meta      Meta             `json:"_meta,omitempty"`
}

// Cost is a cumulative session cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// UsageUpdate reports context-window usage (tokens) and optionally the cumulative cost.
type UsageUpdate struct {
	Used uint64 `json:"used"`
	Size uint64 `json:"size"`
	Cost *Cost  `json:"cost,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// NoticeSeverity is a notice's severity; custom values start with "_".
type NoticeSeverity string

const (
	NoticeInfo    NoticeSeverity = "info"
	NoticeWarning NoticeSeverity = "warning"
	NoticeError   NoticeSeverity = "error"
)

// Notice is an advisory, live-only message (gated by clientCapabilities.session.notices).
type Notice struct {
	Severity    NoticeSeverity `json:"severity"`
	Title       string         `json:"title"`
	Description *string        `json:"description,omitempty"`
	Meta        Meta           `json:"_meta,omitempty"`
}

// CompactionStatus is the state of a context compaction; custom values start with "_".
type CompactionStatus string

const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

// CompactionUpdate reports a context compaction (gated by clientCapabilities.session.compaction).
// The first update for a CompactionID creates it; later ones patch it. Summary, Error and
// Meta have patch semantics: absent = unchanged, [Null] = clear, [Some] = replace (an empty
// Summary also clears it).
type CompactionUpdate struct {
	CompactionID string                   `json:"compactionId"`
	Status       CompactionStatus         `json:"status"`
	Summary      Optional[[]ContentBlock] `json:"summary,omitzero"`
	Error        Optional[string]         `json:"error,omitzero"`
	Meta         Optional[Meta]           `json:"_meta,omitzero"`
}

// CompactionSummaryChunk streams part of a compaction summary.
type CompactionSummaryChunk struct {
	CompactionID string       `json:"compactionId"`
	Content      ContentBlock `json:"content"`
	Meta         Meta         `json:"_meta,omitempty"`
}

// UnknownSessionUpdate is an update with an unknown sessionUpdate tag, kept verbatim in Raw.
type UnknownSessionUpdate struct {
	Tag string
	Raw json.RawMessage
}

func (*UserMessageChunk) wireTag() string        { return "user_message_chunk" }
func (*AgentMessageChunk) wireTag() string       { return "agent_message_chunk" }
func (*AgentThoughtChunk) wireTag() string       { return "agent_thought_chunk" }
func (*ToolCall) wireTag() string                { return "tool_call" }
func (*ToolCallUpdate) wireTag() string          { return "tool_call_update" }
func (*Plan) wireTag() string                    { return "plan" }
func (*AvailableCommandsUpdate) wireTag() string { return "available_commands_update" }
func (*CurrentModeUpdate) wireTag() string       { return "current_mode_update" }
func (*ConfigOptionUpdate) wireTag() string      { return "config_option_update" }
func (*SessionInfoUpdate) wireTag() string       { return "session_info_update" }
func (*UsageUpdate) wireTag() string             { return "usage_update" }
func (*Notice) wireTag() string                  { return "notice" }
func (*CompactionUpdate) wireTag() string        { return "compaction_update" }
func (*CompactionSummaryChunk) wireTag() string  { return "compaction_summary_chunk" }
func (u *UnknownSessionUpdate) wireTag() string  { return u.Tag }
func (u *UnknownSessionUpdate) raw() json.RawMessage {
	return u.Raw
}

func (*UserMessageChunk) isSessionUpdate()        {}
func (*AgentMessageChunk) isSessionUpdate()       {}
func (*AgentThoughtChunk) isSessionUpdate()       {}
func (*ToolCall) isSessionUpdate()                {}
func (*ToolCallUpdate) isSessionUpdate()          {}
func (*Plan) isSessionUpdate()                    {}
func (*AvailableCommandsUpdate) isSessionUpdate() {}
func (*CurrentModeUpdate) isSessionUpdate()       {}
func (*ConfigOptionUpdate) isSessionUpdate()      {}
func (*SessionInfoUpdate) isSessionUpdate()       {}
func (*UsageUpdate) isSessionUpdate()             {}
func (*Notice) isSessionUpdate()                  {}
func (*CompactionUpdate) isSessionUpdate()        {}
func (*CompactionSummaryChunk) isSessionUpdate()  {}
func (*UnknownSessionUpdate) isSessionUpdate()    {}

var sessionUpdateVariants = map[string]func() SessionUpdateVariant{
	"user_message_chunk":        func() SessionUpdateVariant { return new(UserMessageChunk) },
	"agent_message_chunk":       func() SessionUpdateVariant { return new(AgentMessageChunk) },
	"agent_thought_chunk":       func() SessionUpdateVariant { return new(AgentThoughtChunk) },
	"tool_call":                 func() SessionUpdateVariant { return new(ToolCall) },
	"tool_call_update":          func() SessionUpdateVariant { return new(ToolCallUpdate) },
	"plan":                      func() SessionUpdateVariant { return new(Plan) },
	"available_commands_update": func() SessionUpdateVariant { return new(AvailableCommandsUpdate) },
	"current_mode_update":       func() SessionUpdateVariant { return new(CurrentModeUpdate) },
	"config_option_update":      func() SessionUpdateVariant { return new(ConfigOptionUpdate) },
	"session_info_update":       func() SessionUpdateVariant { return new(SessionInfoUpdate) },
	"usage_update":              func() SessionUpdateVariant { return new(UsageUpdate) },
	"notice":                    func() SessionUpdateVariant { return new(Notice) },
	"compaction_update":         func() SessionUpdateVariant { return new(CompactionUpdate) },
	"compaction_summary_chunk":  func() SessionUpdateVariant { return new(CompactionSummaryChunk) },
}

func unknownSessionUpdate(tag string, raw json.RawMessage) SessionUpdateVariant {
	return &UnknownSessionUpdate{Tag: tag, Raw: raw}
}

// MarshalJSON implements [json.Marshaler].
func (u SessionUpdate) MarshalJSON() ([]byte, error) {
	return marshalTagged("sessionUpdate", "SessionUpdate", u.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (u *SessionUpdate) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "sessionUpdate", "SessionUpdate", sessionUpdateVariants, unknownSessionUpdate, &u.Value)
}

// AgentMessage returns an agent_message_chunk update carrying text.
func AgentMessage(text string) SessionUpdate {
	return SessionUpdate{&AgentMessageChunk{Content: Text(text)}}
}

// Update wraps a variant into a SessionUpdate, e.g. acp.Update(&acp.ToolCall{…}).
func Update(v SessionUpdateVariant) SessionUpdate { return SessionUpdate{v} }

// The required arrays below must never go out as null: a nil slice is sent as [].

// MarshalJSON implements [json.Marshaler]; nil Entries marshal as [].
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	p.Entries = nonNil(p.Entries)
	return json.Marshal(plain(p))
}

// MarshalJSON implements [json.Marshaler]; nil AvailableCommands marshal as [].
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type plain AvailableCommandsUpdate
	u.AvailableCommands = nonNil(u.AvailableCommands)
	return json.Marshal(plain(u))
}

// MarshalJSON implements [json.Marshaler]; nil ConfigOptions marshal as [].
func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type plain ConfigOptionUpdate
	u.ConfigOptions = nonNil(u.ConfigOptions)
	return json.Marshal(plain(u))
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
