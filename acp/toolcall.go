package acp

import "encoding/json"

// ToolKind categorises a tool call for the client's UI.
type ToolKind string

const (
	ToolKindRead       ToolKind = "read"
	ToolKindEdit       ToolKind = "edit"
	ToolKindDelete     ToolKind = "delete"
	ToolKindMove       ToolKind = "move"
	ToolKindSearch     ToolKind = "search"
	ToolKindExecute    ToolKind = "execute"
	ToolKindThink      ToolKind = "think"
	ToolKindFetch      ToolKind = "fetch"
	ToolKindSwitchMode ToolKind = "switch_mode"
	ToolKindOther      ToolKind = "other"
)

// ToolCallStatus is a tool call's lifecycle state. There is deliberately no "cancelled": a tool
// aborted by cancellation is reported as failed.
type ToolCallStatus string

const (
	ToolCallPending    ToolCallStatus = "pending"
	ToolCallInProgress ToolCallStatus = "in_progress"
	ToolCallCompleted  ToolCallStatus = "completed"
	ToolCallFailed     ToolCallStatus = "failed"
)

// ToolCallLocation is a file (and optional 1-based line) a tool call touches.
type ToolCallLocation struct {
	Path string  `json:"path"`
	Line *uint32 `json:"line,omitempty"`
	Meta Meta    `json:"_meta,omitempty"`
}

// ToolCall is the "tool_call" session update that announces a tool call. Its optional fields
// may not be null on the wire, so they are omitted when unset; Content and Locations are
// omitted when nil and sent as [] when empty.
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Name       *string            `json:"name,omitempty"`
	Kind       ToolKind           `json:"kind,omitempty"`
	Status     ToolCallStatus     `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// ToolCallUpdate patches a tool call: it is the "tool_call_update" session update and the
// toolCall of a permission request. Unset fields are omitted (unchanged); Content and
// Locations replace the client's arrays when non-nil (an empty slice clears them).
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      *string            `json:"title,omitempty"`
	Name       *string            `json:"name,omitempty"`
	Kind       *ToolKind          `json:"kind,omitempty"`
	Status     *ToolCallStatus    `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// ToolCallContent is the "type"-tagged content of a tool call. Value is one of
// *ToolCallContentBlock ("content"), *ToolCallDiff ("diff"), *ToolCallTerminal ("terminal")
// or *UnknownToolCallContent.
type ToolCallContent struct{ Value ToolCallContentVariant }

// ToolCallContentVariant is a member of [ToolCallContent].
type ToolCallContentVariant interface {
	variant
	isToolCallContent()
}

// ToolCallContentBlock wraps an ordinary content block: {"type":"content","content":{…}}.
type ToolCallContentBlock struct {
	Content ContentBlock `json:"content"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// ToolCallDiff shows a file modification. OldText is nil for a file that did not exist,
// and is then sent as an explicit "oldText": null: the schema also allows leaving it out,
// but clients tell a new file by the null.
type ToolCallDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	Meta    Meta    `json:"_meta,omitempty"`
}

// ToolCallTerminal embeds a terminal created with terminal/create.
type ToolCallTerminal struct {
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// UnknownToolCallContent is tool-call content with an unknown type, kept verbatim in Raw.
type UnknownToolCallContent struct {
	Type string
	Raw  json.RawMessage
}

func (*ToolCallContentBlock) wireTag() string          { return "content" }
func (*ToolCallDiff) wireTag() string                  { return "diff" }
func (*ToolCallTerminal) wireTag() string              { return "terminal" }
func (u *UnknownToolCallContent) wireTag() string      { return u.Type }
func (u *UnknownToolCallContent) raw() json.RawMessage { return u.Raw }

func (*ToolCallContentBlock) isToolCallContent()   {}
func (*ToolCallDiff) isToolCallContent()           {}
func (*ToolCallTerminal) isToolCallContent()       {}
func (*UnknownToolCallContent) isToolCallContent() {}

var toolCallContentVariants = map[string]func() ToolCallContentVariant{
	"content":  func() ToolCallContentVariant { return new(ToolCallContentBlock) },
	"diff":     func() ToolCallContentVariant { return new(ToolCallDiff) },
	"terminal": func() ToolCallContentVariant { return new(ToolCallTerminal) },
}

func unknownToolCallContent(tag string, raw json.RawMessage) ToolCallContentVariant {
	return &UnknownToolCallContent{Type: tag, Raw: raw}
}

// MarshalJSON implements [json.Marshaler].
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	return marshalTagged("type", "ToolCallContent", c.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (c *ToolCallContent) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "type", "ToolCallContent", toolCallContentVariants, unknownToolCallContent, &c.Value)
}

// ToolContent wraps a content block as tool-call content.
func ToolContent(block ContentBlock) ToolCallContent {
	return ToolCallContent{&ToolCallContentBlock{Content: block}}
}

// ToolText is ToolContent(Text(text)).
func ToolText(text string) ToolCallContent { return ToolContent(Text(text)) }

// Diff returns diff tool-call content; oldText nil means the file is new.
func Diff(path string, oldText *string, newText string) ToolCallContent {
	return ToolCallContent{&ToolCallDiff{Path: path, OldText: oldText, NewText: newText}}
}

// Terminal returns tool-call content embedding the client terminal terminalID.
func Terminal(terminalID string) ToolCallContent {
	return ToolCallContent{&ToolCallTerminal{TerminalID: terminalID}}
}
