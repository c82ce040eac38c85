package acp

import (
	"encoding/json"
	"fmt"
)

// SessionMode is one of the legacy session modes (see [SessionModeState]).
type SessionMode struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// SessionModeState is the "modes" of session/new|load|resume responses.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
	Meta           Meta          `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil AvailableModes marshal as [].
func (s SessionModeState) MarshalJSON() ([]byte, error) {
	type plain SessionModeState
	s.AvailableModes = nonNil(s.AvailableModes)
	return json.Marshal(plain(s))
}

// Config option categories. Any other string is allowed; custom ones start with "_".
const (
	ConfigCategoryMode         = "mode"
	ConfigCategoryModel        = "model"
	ConfigCategoryModelConfig  = "model_config"
	ConfigCategoryThoughtLevel = "thought_level"
)

// SessionConfigOption is a "type"-tagged session configuration option. Value is
// *SelectConfigOption, *BooleanConfigOption (only for clients that advertised
// session.configOptions.boolean) or *UnknownConfigOption.
type SessionConfigOption struct{ Value ConfigOptionVariant }

// ConfigOptionVariant is a member of [SessionConfigOption].
type ConfigOptionVariant interface {
	variant
	isConfigOption()
}

// SelectConfigOption is a "select" option: CurrentValue is one of the option values.
type SelectConfigOption struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Description  *string       `json:"description,omitempty"`
	Category     *string       `json:"category,omitempty"`
	CurrentValue string        `json:"currentValue"`
	Options      SelectOptions `json:"options"`
	Meta         Meta          `json:"_meta,omitempty"`
}

// BooleanConfigOption is a "boolean" option.
type BooleanConfigOption struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Description  *string `json:"description,omitempty"`
	Category     *string `json:"category,omitempty"`
	CurrentValue bool    `json:"currentValue"`
	Meta         Meta    `json:"_meta,omitempty"`
}

// UnknownConfigOption is an option with an unknown type, kept verbatim in Raw. Clients ignore
// such options.
type UnknownConfigOption struct {
	Type string
	Raw  json.RawMessage
}

func (*SelectConfigOption) wireTag() string         { return "select" }
func (*BooleanConfigOption) wireTag() string        { return "boolean" }
func (u *UnknownConfigOption) wireTag() string      { return u.Type }
func (u *UnknownConfigOption) raw() json.RawMessage { return u.Raw }
func (*SelectConfigOption) isConfigOption()         {}
func (*BooleanConfigOption) isConfigOption()        {}
func (*UnknownConfigOption) isConfigOption()        {}

var configOptionVariants = map[string]func() ConfigOptionVariant{
	"select":  func() ConfigOptionVariant { return new(SelectConfigOption) },
	"boolean": func() ConfigOptionVariant { return new(BooleanConfigOption) },
}

func unknownConfigOption(tag string, raw json.RawMessage) ConfigOptionVariant {
	return &UnknownConfigOption{Type: tag, Raw: raw}
}

// MarshalJSON implements [json.Marshaler].
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	return marshalTagged("type", "SessionConfigOption", o.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (o *SessionConfigOption) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "type", "SessionConfigOption", configOptionVariants, unknownConfigOption, &o.Value)
}

// SelectOption is one value of a select option.
type SelectOption struct {
	Value       string  `json:"value"`
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// SelectGroup is a named group of select values.
type SelectGroup struct {
	Group   string         `json:"group"`
	Name    string         `json:"name"`
	Options []SelectOption `json:"options"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler]; nil Options marshal as [].
func (g SelectGroup) MarshalJSON() ([]byte, error) {
	type plain SelectGroup
	g.Options = nonNil(g.Options)
	return json.Marshal(plain(g))
}

// SelectOptions is the untagged "options" of a select option: either a flat list or a list of
// groups. Groups wins when non-nil; otherwise Flat is sent (as [] when nil).
type SelectOptions struct {
	Flat   []SelectOption
	Groups []SelectGroup
}

// MarshalJSON implements [json.Marshaler].
func (s SelectOptions) MarshalJSON() ([]byte, error) {
	if s.Groups != nil {
		return json.Marshal(s.Groups)
	}
	return json.Marshal(nonNil(s.Flat))
}

// UnmarshalJSON implements [json.Unmarshaler]. The form is told apart by whether the first
// element has a "group" key, since the schema gives the two list forms no discriminator.
func (s *SelectOptions) UnmarshalJSON(data []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return fmt.Errorf("acp: decoding select options: %w", err)
	}
	*s = SelectOptions{}
	if len(items) == 0 {
		s.Flat = []SelectOption{}
		return nil
	}
	if _, grouped, _ := lookupKey(items[0], "group"); grouped {
		return json.Unmarshal(data, &s.Groups)
	}
	return json.Unmarshal(data, &s.Flat)
}
