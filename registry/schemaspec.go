package registry

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/dsh-tools/dshd/internal/jsonscan"
)

// SchemaType is the JSON type of one property.
//
// The seed's vocabulary is string, number, boolean, object and array. Go
// adds integer: a Go integer field cannot hold 1.5, so the schema says so
// and the model is told before it tries (a divergence from the seed, which
// has no integer type).
type SchemaType string

const (
	TypeString  SchemaType = "string"
	TypeNumber  SchemaType = "number"
	TypeInteger SchemaType = "integer"
	TypeBoolean SchemaType = "boolean"
	TypeObject  SchemaType = "object"
	TypeArray   SchemaType = "array"
)

// SchemaSpec is the seed's per-property vocabulary of a tool's arguments:
// one SchemaProp per JSON property name. [Define] derives it from the Args
// struct; [Definition.Spec] exposes it.
type SchemaSpec map[string]SchemaProp

// SchemaProp describes one property. Required is the per-property flag of
// the seed (the JSON Schema top-level "required" array is built from it).
//
// Beyond the seed's vocabulary it carries integer (see [SchemaType]),
// Values for string-keyed maps, and the numeric, length and pattern bounds
// of the min/max/pattern tags.
type SchemaProp struct {
	Type        SchemaType
	Required    bool
	Description string
	// Enum lists the allowed values (strings only).
	Enum []string
	// Default is the value the body should assume when the property is
	// absent, as JSON. It is advertised to the model and checked at Define;
	// it is not injected: an optional field's zero value means "absent".
	Default json.RawMessage
	// Properties are the nested properties of an object.
	Properties SchemaSpec
	// Items is the schema of an array's elements.
	Items *SchemaProp
	// Values is the schema of a map's values (an object with free keys).
	Values *SchemaProp

	Minimum, Maximum     *float64 // numbers and integers
	MinLength, MaxLength *int     // strings, in code points
	MinItems, MaxItems   *int     // arrays
	Pattern              string   // strings, a Go regexp

	order []string // declaration order of Properties, for the wire
}

func (p SchemaProp) clone() SchemaProp {
	c := p
	c.Enum = slices.Clone(p.Enum)
	c.Default = bytes.Clone(p.Default)
	if p.Properties != nil {
		c.Properties = make(SchemaSpec, len(p.Properties))
		for k, v := range p.Properties {
			c.Properties[k] = v.clone()
		}
	}
	if p.Items != nil {
		it := p.Items.clone()
		c.Items = &it
	}
	if p.Values != nil {
		v := p.Values.clone()
		c.Values = &v
	}
	c.order = slices.Clone(p.order)
	return c
}

func (p *SchemaProp) propertyOrder() []string {
	if len(p.order) == len(p.Properties) {
		return p.order
	}
	return slices.Sorted(maps.Keys(p.Properties))
}

// jsonSchema renders p as JSON Schema (draft 2020-12). Objects are closed
// (additionalProperties: false) unless they are maps. Keys are written in a
// fixed order, properties in declaration order, so the wire form is stable.
func (p *SchemaProp) jsonSchema(buf *bytes.Buffer) {
	buf.WriteString(`{"type":`)
	writeString(buf, string(p.Type))
	if p.Description != "" {
		buf.WriteString(`,"description":`)
		writeString(buf, p.Description)
	}
	if len(p.Enum) > 0 {
		buf.WriteString(`,"enum":[`)
		for i, e := range p.Enum {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, e)
		}
		buf.WriteByte(']')
	}
	if p.Default != nil {
		buf.WriteString(`,"default":`)
		buf.Write(p.Default)
	}
	writeFloat := func(key string, f *float64) {
		if f != nil {
			buf.WriteString(`,"` + key + `":`)
			buf.WriteString(strconv.FormatFloat(*f, 'g', -1, 64))
		}
	}
	writeInt := func(key string, n *int) {
		if n != nil {
			buf.WriteString(`,"` + key + `":`)
			buf.WriteString(strconv.Itoa(*n))
		}
	}
	writeFloat("minimum", p.Minimum)
	writeFloat("maximum", p.Maximum)
	writeInt("minLength", p.MinLength)
	writeInt("maxLength", p.MaxLength)
	writeInt("minItems", p.MinItems)
	writeInt("maxItems", p.MaxItems)
	if p.Pattern != "" {
		buf.WriteString(`,"pattern":`)
		writeString(buf, p.Pattern)
	}
	switch p.Type {
	case TypeObject:
		if p.Values != nil {
			buf.WriteString(`,"additionalProperties":`)
			p.Values.jsonSchema(buf)
			break
		}
		buf.WriteString(`,"properties":{`)
		var required []string
		for i, name := range p.propertyOrder() {
			if i > 0 {
				buf.WriteByte(',')
			}
			sub := p.Properties[name]
			writeString(buf, name)
			buf.WriteByte(':')
			sub.jsonSchema(buf)
			if sub.Required {
				required = append(required, name)
			}
		}
		buf.WriteByte('}')
		if len(required) > 0 {
			buf.WriteString(`,"required":[`)
			for i, name := range required {
				if i > 0 {
					buf.WriteByte(',')
				}
				writeString(buf, name)
			}
			buf.WriteByte(']')
		}
		buf.WriteString(`,"additionalProperties":false`)
	case TypeArray:
		if p.Items != nil {
			buf.WriteString(`,"items":`)
			p.Items.jsonSchema(buf)
		}
	}
	buf.WriteByte('}')
}

func writeString(buf *bytes.Buffer, s string) {
	buf.Write(jsonscan.AppendString(buf.AvailableBuffer(), s)) // as json.Marshal(s) writes it
}
