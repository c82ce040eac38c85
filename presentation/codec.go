package presentation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNoCard is returned when marshalling a ResultView whose Card is nil (or
// a nil pointer of a card type): a zero ResultView is a programming error,
// not an empty card.
var ErrNoCard = errors.New("presentation: ResultView has no card")

// Card tags, the values of the "card" member on the wire.
const (
	CardGeneric  = "generic"
	CardTerminal = "terminal"
	CardDiff     = "diff"
)

// Tag returns the card tag of v ("generic", "terminal", "diff"), or "" for
// a zero ResultView.
func (v ResultView) Tag() string {
	if v.Card == nil {
		return ""
	}
	return v.Card.cardTag()
}

// MarshalJSON encodes the card as one object whose "card" member names the
// variant, followed by the variant's own fields. A DiffCard's diffs are
// always an array, never null.
func (v ResultView) MarshalJSON() ([]byte, error) {
	var body []byte
	var err error
	switch c := v.Card.(type) {
	case *GenericCard:
		if c == nil {
			return nil, ErrNoCard
		}
		body, err = json.Marshal(c)
	case *TerminalCard:
		if c == nil {
			return nil, ErrNoCard
		}
		body, err = json.Marshal(c)
	case *DiffCard:
		if c == nil {
			return nil, ErrNoCard
		}
		if c.Diffs == nil {
			cp := *c
			cp.Diffs = []FileDiff{}
			c = &cp
		}
		body, err = json.Marshal(c)
	default: // nil: Card is sealed, so no other type can get here
		return nil, ErrNoCard
	}
	if err != nil {
		return nil, fmt.Errorf("presentation: encoding %s card: %w", v.Card.cardTag(), err)
	}
	// body is a JSON object; splice the tag in as its first member. The
	// variants have no "card" field, so it cannot collide.
	var out bytes.Buffer
	out.Grow(len(body) + 24)
	out.WriteString(`{"card":`)
	tag, _ := json.Marshal(v.Card.cardTag())
	out.Write(tag)
	if rest := bytes.TrimSpace(body[1:]); len(rest) > 1 { // more than "}"
		out.WriteByte(',')
		out.Write(rest)
	} else {
		out.WriteByte('}')
	}
	return out.Bytes(), nil
}

// UnmarshalJSON decodes a card-tagged object. The tag is matched exactly
// (case-sensitively). A known tag decodes into its variant and a malformed
// body of a known card is an error. An unknown tag, and a missing tag,
// decode to a *GenericCard keeping "title" and "content" when they are
// well-formed: a newer producer never breaks an older reader, and a
// tag-less object is the plainest card there is. JSON null leaves v
// unchanged; anything other than an object, or a tag that is not a string,
// is an error.
func (v *ResultView) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return fmt.Errorf("presentation: result view: %w", err)
	}
	if members == nil { // only "null" decodes to a nil map, handled above
		return fmt.Errorf("presentation: result view is not an object")
	}
	var tag string
	if raw, ok := members["card"]; ok {
		if err := json.Unmarshal(raw, &tag); err != nil {
			return fmt.Errorf("presentation: result view card tag: %w", err)
		}
	}
	var card Card
	switch tag {
	case CardGeneric:
		card = new(GenericCard)
	case CardTerminal:
		card = new(TerminalCard)
	case CardDiff:
		card = new(DiffCard)
	default:
		v.Card = lenientGeneric(members)
		return nil
	}
	if err := json.Unmarshal(data, card); err != nil {
		return fmt.Errorf("presentation: decoding %s card: %w", tag, err)
	}
	v.Card = card
	return nil
}

// lenientGeneric salvages what a generic card can show from an object of
// an unknown card: its title and content, each only if well-formed.
func lenientGeneric(members map[string]json.RawMessage) *GenericCard {
	g := new(GenericCard)
	if raw, ok := members["title"]; ok {
		var title string
		if json.Unmarshal(raw, &title) == nil {
			g.Title = title
		}
	}
	if raw, ok := members["content"]; ok {
		var content []Content
		if json.Unmarshal(raw, &content) == nil {
			g.Content = content
		}
	}
	return g
}
