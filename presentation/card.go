package presentation

// ToolCallKind picks the icon of a tool-call card. The values are ACP's
// ToolKind values; Think and SwitchMode exist for tools that want them.
type ToolCallKind string

const (
	KindRead       ToolCallKind = "read"
	KindEdit       ToolCallKind = "edit"
	KindDelete     ToolCallKind = "delete"
	KindMove       ToolCallKind = "move"
	KindSearch     ToolCallKind = "search"
	KindExecute    ToolCallKind = "execute"
	KindFetch      ToolCallKind = "fetch"
	KindThink      ToolCallKind = "think"
	KindSwitchMode ToolCallKind = "switch_mode"
	KindOther      ToolCallKind = "other"
)

// Mutates reports whether a call of this kind changes the workspace.
// Session modes use it: plan mode denies mutating calls, acceptEdits allows
// edit-like ones.
func (k ToolCallKind) Mutates() bool {
	switch k {
	case KindEdit, KindDelete, KindMove, KindExecute, KindOther:
		return true
	}
	return false
}

// FileLocation is a file (and optionally a 1-based line) a card points at,
// so an editor can follow along. Path is absolute.
type FileLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// FileDiff is one change to one file: usually one hunk with its context
// lines. OldText is nil for a file that did not exist before.
type FileDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	// Line is the 1-based line in the new file where NewText starts; 0 when
	// unknown. It becomes the hunk's location.
	Line int `json:"line,omitempty"`
}

// ContentType names the kind of a Content block.
type ContentType string

const (
	ContentText         ContentType = "text"
	ContentImage        ContentType = "image"
	ContentAudio        ContentType = "audio"
	ContentResourceLink ContentType = "resource_link"
	ContentResource     ContentType = "resource"
)

// Content is one provider-neutral block of tool output: what the model reads
// and what a generic card shows. It is deliberately flat: Type says which of
// the other fields carry meaning.
type Content struct {
	Type     ContentType `json:"type"`
	Text     string      `json:"text,omitempty"`     // text; the text of an embedded text resource
	Data     string      `json:"data,omitempty"`     // base64 image/audio; blob of an embedded resource
	MIMEType string      `json:"mimeType,omitempty"` // image, audio, resources
	URI      string      `json:"uri,omitempty"`      // resource_link, resource
	Name     string      `json:"name,omitempty"`     // resource_link
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// CallView is how a tool wants its call shown before it runs: the title,
// the icon kind, the files it touches and optional content (for example the
// command it will run).
type CallView struct {
	Title     string         `json:"title"`
	Kind      ToolCallKind   `json:"kind,omitempty"`
	Locations []FileLocation `json:"locations,omitempty"`
	Content   []Content      `json:"content,omitempty"`
}
