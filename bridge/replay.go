package bridge

import (
	"bytes"
	"encoding/json"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// What a replay shows of a call differs from what was sent live in one
// way: the terminals are gone. A logged card points at an editor terminal
// (tier 1) or a display terminal (tier 2) that no longer exists, so a
// client loading the session would show nothing. On replay a terminal
// card becomes its recorded output in the fenced console form of tier 3,
// with the exit status, and the display-terminal _meta is dropped.
// Everything else is replayed as it was sent; an update that is re-encoded
// on the way (because it held a terminal or a diff) also gets today's
// encoding, such as a new file's explicit "oldText": null.

// replayCards holds, per call id, the console form of the call's recorded
// terminal card.
type replayCards map[string]string

// replayCardsOf collects the terminal cards of the logged tool results.
func replayCardsOf(recs []sessionlog.Record) replayCards {
	cards := replayCards{}
	for _, r := range recs {
		if r.Kind != evToolResult || !bytes.Contains(r.Payload, []byte(`"terminal"`)) {
			continue
		}
		var e struct {
			CallID string          `json:"callId"`
			Result registry.Result `json:"result"`
		}
		if r.Decode(&e) != nil || e.Result.View == nil {
			continue
		}
		if card, ok := e.Result.View.Card.(*presentation.TerminalCard); ok {
			cards[e.CallID] = presentation.ConsoleFallback(card)
		}
	}
	return cards
}

// terminalMeta are the _meta keys of the display-terminal convention.
var terminalMeta = []string{"terminal_info", "terminal_output", "terminal_exit"}

// rewrite returns the logged update as a replay sends it; send is false
// for an update left with nothing to say (a display terminal's output
// chunk).
func (rc replayCards) rewrite(payload json.RawMessage) (out json.RawMessage, send bool) {
	if !bytes.Contains(payload, []byte(`"terminal`)) && (!bytes.Contains(payload, []byte(`"diff"`)) || !diffWithoutOldText(payload)) {
		return payload, true // most updates: as they were sent
	}
	var u acp.SessionUpdate
	if json.Unmarshal(payload, &u) != nil {
		return payload, true
	}
	switch v := u.Value.(type) {
	case *acp.ToolCall:
		v.Content = rc.content(v.ToolCallID, v.Content)
		v.Meta = withoutKeys(v.Meta, terminalMeta)
	case *acp.ToolCallUpdate:
		v.Content = rc.content(v.ToolCallID, v.Content)
		v.Meta = withoutKeys(v.Meta, terminalMeta)
		if v.Title == nil && v.Name == nil && v.Kind == nil && v.Status == nil && v.Content == nil &&
			v.Locations == nil && v.RawInput == nil && v.RawOutput == nil && v.Meta == nil {
			return nil, false
		}
	default:
		return payload, true
	}
	b, err := json.Marshal(u)
	if err != nil {
		return payload, true
	}
	return b, true
}

// diffWithoutOldText reports whether a logged update holds a diff without
// "oldText", as logs written before a new file's diff said "oldText": null
// do: such an update is re-encoded, the others (every diff of today's
// logs) are sent as they were logged. A light decode of the content's
// block types decides, not the content union's codec, which would decode
// and encode each diff's texts twice over. Undecodable: true, for the full
// decode to judge.
func diffWithoutOldText(payload json.RawMessage) bool {
	var u struct {
		Content []struct {
			Type    string          `json:"type"`
			OldText json.RawMessage `json:"oldText"`
		} `json:"content"`
	}
	if json.Unmarshal(payload, &u) != nil {
		return true
	}
	for _, c := range u.Content {
		if c.Type == "diff" && c.OldText == nil {
			return true
		}
	}
	return false
}

// content replaces terminal blocks with the call's recorded output; a
// terminal whose output was not recorded (the call failed before it had a
// card) is dropped. It returns nil when nothing is left of content that
// held only terminals, so the client's content is left alone.
func (rc replayCards) content(callID string, cs []acp.ToolCallContent) []acp.ToolCallContent {
	hasTerminal := false
	for _, c := range cs {
		if _, ok := c.Value.(*acp.ToolCallTerminal); ok {
			hasTerminal = true
		}
	}
	if !hasTerminal {
		return cs
	}
	out := make([]acp.ToolCallContent, 0, len(cs))
	for _, c := range cs {
		if _, ok := c.Value.(*acp.ToolCallTerminal); ok {
			if text, ok := rc[callID]; ok {
				out = append(out, acp.ToolText(text))
			}
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withoutKeys returns the JSON object meta without keys; nil when nothing
// is left. Meta that is not an object is returned as it is.
func withoutKeys(meta acp.Meta, keys []string) acp.Meta {
	if len(meta) == 0 {
		return meta
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return meta
	}
	removed := false
	for _, k := range keys {
		if _, ok := m[k]; ok {
			delete(m, k)
			removed = true
		}
	}
	switch {
	case !removed:
		return meta
	case len(m) == 0:
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}
