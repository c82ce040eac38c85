package acp

import (
	"encoding/json"
)

// Elicitation modes and actions.
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"

	ElicitationAccept  = "accept"
	ElicitationDecline = "decline"
	ElicitationCancel  = "cancel"
)

// CreateElicitationRequest is the params of elicitation/create. Mode is "form" (set
// RequestedSchema) or "url" (set ElicitationID and URL). The scope is either SessionID (plus
// an optional ToolCallID) or RequestID, the id of a client request being handled outside any
// session. The schema's flattened anyOf has no single discriminator, so this is a flat struct;
// use [FormElicitation] and [URLElicitation] to build valid values.
type CreateElicitationRequest struct {
	Mode            string             `json:"mode"`
	Message         string             `json:"message"`
	SessionID       string             `json:"sessionId,omitempty"`
	ToolCallID      *string            `json:"toolCallId,omitempty"`
	RequestID       RequestID          `json:"requestId,omitempty"`
	RequestedSchema *ElicitationSchema `json:"requestedSchema,omitempty"`
	ElicitationID   string             `json:"elicitationId,omitempty"`
	URL             string             `json:"url,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// URLElicitation returns a session-scoped URL-mode request.
func URLElicitation(sessionID, message, elicitationID, url string) CreateElicitationRequest {
	return CreateElicitationRequest{Mode: ElicitationModeURL, SessionID: sessionID, Message: message, ElicitationID: elicitationID, URL: url}
}

// CreateElicitationResponse is the result of elicitation/create. Content (accept only) maps
// property names to string, number, boolean or string-array values, kept raw.
type CreateElicitationResponse struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content,omitempty"`
	Meta    Meta                       `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ElicitationSchema is the restricted JSON Schema of a form elicitation: an object of
// primitive properties.
type ElicitationSchema struct {
	Type        string                               `json:"type,omitempty"` // "object"
	Title       *string                              `json:"title,omitempty"`
	Description *string                              `json:"description,omitempty"`
	Properties  map[string]ElicitationPropertySchema `json:"properties,omitempty"`
	Required    []string                             `json:"required,omitempty"`
	Meta        Meta                                 `json:"_meta,omitempty"`
}

// ElicitationPropertySchema is a "type"-tagged property schema. Value is *StringPropertySchema,
// *NumberPropertySchema, *IntegerPropertySchema, *BooleanPropertySchema,
// *MultiSelectPropertySchema ("array") or *UnknownPropertySchema.
type ElicitationPropertySchema struct{ Value PropertySchemaVariant }

// PropertySchemaVariant is a member of [ElicitationPropertySchema].
type PropertySchemaVariant interface {
	variant
	isPropertySchema()
}

// EnumOption is a titled enum value.
type EnumOption struct {
	Const       string  `json:"const"`
	Title       string  `json:"title"`
	Description *string `json:"description,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// StringPropertySchema is a string field; Format is email, uri, date or date-time.
type StringPropertySchema struct {
	Title       *string      `json:"title,omitempty"`
	Description *string      `json:"description,omitempty"`
	MinLength   *uint32      `json:"minLength,omitempty"`
	MaxLength   *uint32      `json:"maxLength,omitempty"`
	Pattern     *string      `json:"pattern,omitempty"`
	Format      *string      `json:"format,omitempty"`
	Default     *string      `json:"default,omitempty"`
	Enum        []string     `json:"enum,omitempty"`
	OneOf       []EnumOption `json:"oneOf,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// NumberPropertySchema is a number field.
type NumberPropertySchema struct {
	Title       *string  `json:"title,omitempty"`
	Description *string  `json:"description,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Default     *float64 `json:"default,omitempty"`
	Meta        Meta     `json:"_meta,omitempty"`
}

// IntegerPropertySchema is an integer field.
type IntegerPropertySchema struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	Minimum     *int64  `json:"minimum,omitempty"`
	Maximum     *int64  `json:"maximum,omitempty"`
	Default     *int64  `json:"default,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// BooleanPropertySchema is a boolean field.
type BooleanPropertySchema struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	Default     *bool   `json:"default,omitempty"`
	Meta        Meta    `json:"_meta,omitempty"`
}

// MultiSelectPropertySchema is a multi-select ("array") field.
type MultiSelectPropertySchema struct {
	Title       *string          `json:"title,omitempty"`
	Description *string          `json:"description,omitempty"`
	MinItems    *uint64          `json:"minItems,omitempty"`
	MaxItems    *uint64          `json:"maxItems,omitempty"`
	Items       MultiSelectItems `json:"items"`
	Default     []string         `json:"default,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// MultiSelectItems is either {type:"string", enum:[…]} (Enum) or {anyOf:[EnumOption…]} (AnyOf,
// used when AnyOf is non-nil).
type MultiSelectItems struct {
	Enum  []string
	AnyOf []EnumOption
	Meta  Meta
}

type multiSelectItemsWire struct {
	Type  string       `json:"type,omitempty"`
	Enum  []string     `json:"enum,omitempty"`
	AnyOf []EnumOption `json:"anyOf,omitempty"`
	Meta  Meta         `json:"_meta,omitempty"`
}

// MarshalJSON implements [json.Marshaler].
func (m MultiSelectItems) MarshalJSON() ([]byte, error) {
	if m.AnyOf != nil {
		return json.Marshal(struct {
			AnyOf []EnumOption `json:"anyOf"`
			Meta  Meta         `json:"_meta,omitempty"`
		}{m.AnyOf, m.Meta})
	}
	return json.Marshal(struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
		Meta Meta     `json:"_meta,omitempty"`
	}{"string", nonNil(m.Enum), m.Meta})
}

// UnmarshalJSON implements [json.Unmarshaler].
func (m *MultiSelectItems) UnmarshalJSON(data []byte) error {
	var w multiSelectItemsWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = MultiSelectItems{Enum: w.Enum, AnyOf: w.AnyOf, Meta: w.Meta}
	return nil
}

// UnknownPropertySchema is a property schema with an unknown type, kept verbatim in Raw.
type UnknownPropertySchema struct {
	Type string
	Raw  json.RawMessage
}

func (*StringPropertySchema) wireTag() string         { return "string" }
func (*NumberPropertySchema) wireTag() string         { return "number" }
func (*IntegerPropertySchema) wireTag() string        { return "integer" }
func (*BooleanPropertySchema) wireTag() string        { return "boolean" }
func (*MultiSelectPropertySchema) wireTag() string    { return "array" }
func (u *UnknownPropertySchema) wireTag() string      { return u.Type }
func (u *UnknownPropertySchema) raw() json.RawMessage { return u.Raw }
func (*StringPropertySchema) isPropertySchema()       {}
func (*NumberPropertySchema) isPropertySchema()       {}
func (*IntegerPropertySchema) isPropertySchema()      {}
func (*BooleanPropertySchema) isPropertySchema()      {}
func (*MultiSelectPropertySchema) isPropertySchema()  {}
func (*UnknownPropertySchema) isPropertySchema()      {}

var propertySchemaVariants = map[string]func() PropertySchemaVariant{
	"string":  func() PropertySchemaVariant { return new(StringPropertySchema) },
	"number":  func() PropertySchemaVariant { return new(NumberPropertySchema) },
	"integer": func() PropertySchemaVariant { return new(IntegerPropertySchema) },
	"boolean": func() PropertySchemaVariant { return new(BooleanPropertySchema) },
	"array":   func() PropertySchemaVariant { return new(MultiSelectPropertySchema) },
}

// MarshalJSON implements [json.Marshaler].
func (p ElicitationPropertySchema) MarshalJSON() ([]byte, error) {
	return marshalTagged("type", "ElicitationPropertySchema", p.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (p *ElicitationPropertySchema) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "type", "ElicitationPropertySchema", propertySchemaVariants,
		func(tag string, raw json.RawMessage) PropertySchemaVariant {
			return &UnknownPropertySchema{Type: tag, Raw: raw}
		}, &p.Value)
}
