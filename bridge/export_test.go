package bridge

import (
	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/presentation"
)

// MappedCard is mapCard's result, exported for the golden tests.
type MappedCard struct {
	Title     string                 `json:"title,omitempty"`
	Content   []acp.ToolCallContent  `json:"content"`
	Locations []acp.ToolCallLocation `json:"locations,omitempty"`
	Meta      acp.Meta               `json:"_meta,omitempty"`
	PreChunk  acp.Meta               `json:"preChunk,omitempty"`
}

// CallState is what the mapping knows of the call a card completes.
type CallState struct {
	ID             string
	Tier2          bool // announced with _meta.terminal_info
	Streamed       bool // terminal_output chunks were sent
	EditorTerminal string
}

// MapCardForTest maps a result card as the final tool_call_update would.
func MapCardForTest(caps acp.ClientCapabilities, cwd string, call CallState, card presentation.Card) MappedCard {
	f := featuresOf(caps)
	oc := &openCall{id: call.ID, terminal: call.Tier2, streamed: call.Streamed, editorTerminal: call.EditorTerminal}
	m := f.mapCard(cwd, oc, card)
	return MappedCard{Title: m.title, Content: m.content, Locations: m.locations, Meta: m.meta, PreChunk: m.preChunk}
}

// RelTitle is relTitle.
var RelTitle = relTitle
