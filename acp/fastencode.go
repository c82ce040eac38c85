package acp

import (
	"encoding/json"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"strconv"
)

// The hot session/update shapes (tool calls, their content, text blocks, locations) are
// encoded by hand into one buffer. encoding/json v1 re-scans and compacts the output of every
// MarshalJSON it calls, so a union nested three deep was validated three times; writing the
// whole tree here means encoding/json scans it once, at the outermost wrapper. The output is
// byte-identical to what encoding/json produces for the same struct tags (the differential
// tests in fastcodec_test.go hold it to that); rarer shapes fall back to encoding/json.

// initialCap is the starting size of an encode buffer for shapes sizeHint does not estimate.
const initialCap = 256

// sizeHint estimates the encoded size of u, so the buffer is allocated once and not much
// larger than needed (escapes may still make it grow).
func sizeHint(u SessionUpdate) int {
	var strs int
	var content []ToolCallContent
	switch v := u.Value.(type) {
	case *ToolCallUpdate:
		if v == nil {
			return initialCap
		}
		strs = len(v.ToolCallID) + len(v.RawInput) + len(v.RawOutput) + len(v.Meta)
		if v.Title != nil {
			strs += len(*v.Title)
		}
		content = v.Content
		for _, l := range v.Locations {
			strs += len(l.Path) + 32
		}
	case *ToolCall:
		if v == nil {
			return initialCap
		}
		strs = len(v.ToolCallID) + len(v.Title) + len(v.RawInput) + len(v.RawOutput) + len(v.Meta)
		content = v.Content
		for _, l := range v.Locations {
			strs += len(l.Path) + 32
		}
	case *AgentMessageChunk:
		if t, ok := v.Content.Value.(*TextContent); ok && t != nil {
			strs = len(t.Text)
		}
	default:
		return initialCap
	}
	for _, c := range content {
		switch d := c.Value.(type) {
		case *ToolCallDiff:
			strs += len(d.Path) + len(d.NewText) + 48
			if d.OldText != nil {
				strs += len(*d.OldText)
			}
		default:
			strs += 128
		}
	}
	return 128 + strs + strs/8
}

// appendSessionUpdate appends u as JSON. Unknown variants are compacted (see appendRaw) so the
// result is always compact, as encoding/json would make it.
func appendSessionUpdate(dst []byte, u SessionUpdate) ([]byte, error) {
	var err error
	switch v := u.Value.(type) {
	case *ToolCallUpdate:
		if v == nil {
			break
		}
		dst = append(dst, `{"sessionUpdate":"tool_call_update",`...)
		return appendToolCallUpdateFields(dst, v)
	case *ToolCall:
		if v == nil {
			break
		}
		dst = append(dst, `{"sessionUpdate":"tool_call","toolCallId":`...)
		dst = jsonscan.AppendString(dst, v.ToolCallID)
		dst = append(dst, `,"title":`...)
		dst = jsonscan.AppendString(dst, v.Title)
		dst = appendOptString(dst, `,"name":`, v.Name)
		if v.Kind != "" {
			dst = append(dst, `,"kind":`...)
			dst = jsonscan.AppendString(dst, string(v.Kind))
		}
		if v.Status != "" {
			dst = append(dst, `,"status":`...)
			dst = jsonscan.AppendString(dst, string(v.Status))
		}
		if dst, err = appendToolCallTail(dst, v.Content, v.Locations, v.RawInput, v.RawOutput, v.Meta); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	case *AgentMessageChunk:
		if v == nil {
			break
		}
		return appendChunk(dst, `{"sessionUpdate":"agent_message_chunk","content":`, v.Content, v.MessageID, v.Meta)
	case *AgentThoughtChunk:
		if v == nil {
			break
		}
		return appendChunk(dst, `{"sessionUpdate":"agent_thought_chunk","content":`, v.Content, v.MessageID, v.Meta)
	case *UserMessageChunk:
		if v == nil {
			break
		}
		return appendChunk(dst, `{"sessionUpdate":"user_message_chunk","content":`, v.Content, v.MessageID, v.Meta)
	}
	return appendTaggedGeneric(dst, "sessionUpdate", "SessionUpdate", u.Value)
}

// appendToolCallUpdateFields appends the members of v after an opening brace (and possibly a
// tag member) and closes the object.
func appendToolCallUpdateFields(dst []byte, v *ToolCallUpdate) ([]byte, error) {
	dst = append(dst, `"toolCallId":`...)
	dst = jsonscan.AppendString(dst, v.ToolCallID)
	dst = appendOptString(dst, `,"title":`, v.Title)
	dst = appendOptString(dst, `,"name":`, v.Name)
	if v.Kind != nil {
		dst = append(dst, `,"kind":`...)
		dst = jsonscan.AppendString(dst, string(*v.Kind))
	}
	if v.Status != nil {
		dst = append(dst, `,"status":`...)
		dst = jsonscan.AppendString(dst, string(*v.Status))
	}
	dst, err := appendToolCallTail(dst, v.Content, v.Locations, v.RawInput, v.RawOutput, v.Meta)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendToolCallTail appends the members ToolCall and ToolCallUpdate share, in field order.
func appendToolCallTail(dst []byte, content []ToolCallContent, locations []ToolCallLocation, rawInput, rawOutput json.RawMessage, meta Meta) ([]byte, error) {
	var err error
	if content != nil { // omitzero: nil is omitted, empty is []
		dst = append(dst, `,"content":[`...)
		for i, c := range content {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendToolCallContent(dst, c); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	if locations != nil {
		dst = append(dst, `,"locations":[`...)
		for i, l := range locations {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"path":`...)
			dst = jsonscan.AppendString(dst, l.Path)
			if l.Line != nil {
				dst = append(dst, `,"line":`...)
				dst = strconv.AppendUint(dst, uint64(*l.Line), 10)
			}
			if dst, err = appendMeta(dst, l.Meta); err != nil {
				return nil, err
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if dst, err = appendRawMember(dst, `,"rawInput":`, rawInput); err != nil {
		return nil, err
	}
	if dst, err = appendRawMember(dst, `,"rawOutput":`, rawOutput); err != nil {
		return nil, err
	}
	return appendMeta(dst, meta)
}

// appendChunk appends a message chunk; prefix holds the tag and the "content" key.
func appendChunk(dst []byte, prefix string, content ContentBlock, messageID *string, meta Meta) ([]byte, error) {
	dst = append(dst, prefix...)
	dst, err := appendContentBlock(dst, content)
	if err != nil {
		return nil, err
	}
	dst = appendOptString(dst, `,"messageId":`, messageID)
	if dst, err = appendMeta(dst, meta); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

func appendToolCallContent(dst []byte, c ToolCallContent) ([]byte, error) {
	var err error
	switch v := c.Value.(type) {
	case *ToolCallDiff:
		if v == nil {
			break
		}
		dst = append(dst, `{"type":"diff","path":`...)
		dst = jsonscan.AppendString(dst, v.Path)
		if v.OldText == nil {
			dst = append(dst, `,"oldText":null`...) // a new file: explicit, see ToolCallDiff
		} else {
			dst = jsonscan.AppendString(append(dst, `,"oldText":`...), *v.OldText)
		}
		dst = append(dst, `,"newText":`...)
		dst = jsonscan.AppendString(dst, v.NewText)
		if dst, err = appendMeta(dst, v.Meta); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	case *ToolCallContentBlock:
		if v == nil {
			break
		}
		dst = append(dst, `{"type":"content","content":`...)
		if dst, err = appendContentBlock(dst, v.Content); err != nil {
			return nil, err
		}
		if dst, err = appendMeta(dst, v.Meta); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	case *ToolCallTerminal:
		if v == nil {
			break
		}
		dst = append(dst, `{"type":"terminal","terminalId":`...)
		dst = jsonscan.AppendString(dst, v.TerminalID)
		if dst, err = appendMeta(dst, v.Meta); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	return appendTaggedGeneric(dst, "type", "ToolCallContent", c.Value)
}

func appendContentBlock(dst []byte, b ContentBlock) ([]byte, error) {
	if v, ok := b.Value.(*TextContent); ok && v != nil {
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonscan.AppendString(dst, v.Text)
		var err error
		if v.Annotations != nil {
			dst = append(dst, `,"annotations":`...)
			if dst, err = appendMarshal(dst, v.Annotations); err != nil {
				return nil, err
			}
		}
		if dst, err = appendMeta(dst, v.Meta); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	return appendTaggedGeneric(dst, "type", "ContentBlock", b.Value)
}

// appendTaggedGeneric is the fallback for variants without a hand-written encoder. Unknown
// variants' raw payloads are compacted as encoding/json would compact them when they are
// returned from a nested MarshalJSON.
func appendTaggedGeneric(dst []byte, key, union string, v variant) ([]byte, error) {
	body, err := marshalTagged(key, union, v)
	if err != nil {
		return nil, err
	}
	if _, unknown := v.(unknownVariant); unknown {
		return appendRaw(dst, body)
	}
	return jsonscan.AppendValidUTF8(dst, body), nil
}

// appendMarshal appends encoding/json's encoding of v (already compact and HTML-escaped),
// made valid UTF-8 (see appendValidUTF8).
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonscan.AppendValidUTF8(dst, b), nil
}

// appendRaw appends raw JSON the way encoding/json emits a json.RawMessage: validated,
// compacted and HTML-escaped; and, unlike encoding/json, made valid UTF-8.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	return appendMarshal(dst, raw)
}

// appendRawMember appends key and raw unless raw is empty (`omitempty` on a json.RawMessage).
func appendRawMember(dst []byte, key string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return dst, nil
	}
	return appendRaw(append(dst, key...), raw)
}

func appendMeta(dst []byte, meta Meta) ([]byte, error) {
	return appendRawMember(dst, `,"_meta":`, meta)
}

// appendOptString appends key and *s unless s is nil (`omitempty` on a *string).
func appendOptString(dst []byte, key string, s *string) []byte {
	if s == nil {
		return dst
	}
	return jsonscan.AppendString(append(dst, key...), *s)
}
