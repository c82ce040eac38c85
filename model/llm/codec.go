package llm

import (
	"encoding/json"
	"fmt"
)

// Messages are stored in the durable session log, so they have a stable
// JSON form: {"role": "...", "parts": [{"type": "text", "text": "..."}, ...]}.
// Each part is its variant's fields plus a "type" tag taken from the Go type.

type wireMessage struct {
	Role  Role       `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Type string `json:"type"`
	// Exactly one of these is set, chosen by Type.
	part Part
}

type wireToolResult struct {
	CallID  string     `json:"callId"`
	Name    string     `json:"name,omitempty"`
	Content []wirePart `json:"content"`
	IsError bool       `json:"isError,omitempty"`
}

// MarshalJSON writes the tagged form; a nil or unknown part is an error.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Parts: make([]wirePart, 0, len(m.Parts))}
	for _, p := range m.Parts {
		if p == nil {
			return nil, fmt.Errorf("llm: nil part in %s message", m.Role)
		}
		w.Parts = append(w.Parts, wirePart{Type: p.partType(), part: p})
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the tagged form; an unknown part type is an error.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Role = w.Role
	m.Parts = make([]Part, 0, len(w.Parts))
	for _, p := range w.Parts {
		m.Parts = append(m.Parts, p.part)
	}
	return nil
}

func (p wirePart) MarshalJSON() ([]byte, error) {
	var body any = p.part
	if r, ok := p.part.(*ToolResult); ok {
		wr := wireToolResult{CallID: r.CallID, Name: r.Name, IsError: r.IsError, Content: make([]wirePart, 0, len(r.Content))}
		for _, c := range r.Content {
			if c == nil {
				return nil, fmt.Errorf("llm: nil content part in tool result %s", r.CallID)
			}
			wr.Content = append(wr.Content, wirePart{Type: c.partType(), part: c})
		}
		body = wr
	}
	fields, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	tag, _ := json.Marshal(p.Type)
	// Splice the tag in front of the variant's own fields: no map
	// round-trip, so field order survives.
	out := append([]byte(`{"type":`), tag...)
	if len(fields) > 2 {
		out = append(out, ',')
		out = append(out, fields[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

func (p *wirePart) UnmarshalJSON(b []byte) error {
	var tag struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &tag); err != nil {
		return err
	}
	p.Type = tag.Type
	switch tag.Type {
	case "text":
		p.part = new(Text)
	case "image":
		p.part = new(Image)
	case "reasoning":
		p.part = new(Reasoning)
	case "tool_call":
		p.part = new(ToolCall)
	case "tool_result":
		var wr wireToolResult
		if err := json.Unmarshal(b, &wr); err != nil {
			return err
		}
		r := &ToolResult{CallID: wr.CallID, Name: wr.Name, IsError: wr.IsError}
		for _, c := range wr.Content {
			switch c.part.(type) {
			case *Text, *Image:
			default:
				return fmt.Errorf("llm: tool result content of type %q", c.Type)
			}
			r.Content = append(r.Content, c.part)
		}
		p.part = r
		return nil
	case "":
		return fmt.Errorf("llm: message part without a type")
	default:
		return fmt.Errorf("llm: unknown message part type %q", tag.Type)
	}
	return json.Unmarshal(b, p.part)
}
