package structured

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// StructuredOutputSchema is a schema in the supported subset, as decoded
// JSON (what json.Unmarshal into map[string]any gives). The functions of
// this package also accept a json.RawMessage or any other plain Go data.
type StructuredOutputSchema = map[string]any

// The supported keywords. Every one of them is enforced by [Validate];
// anything else (combinators, $ref, format, patternProperties, tuple
// items, uniqueItems, …) is refused by [AssertSupported], because the
// schema travels verbatim to the model and a keyword the model sees but
// the validator ignores would be a promise nobody keeps.
//
//	type                        "object" | "array" | "string" | "number" |
//	                            "integer" | "boolean" | "null", or a non-empty
//	                            array of distinct ones; the root is "object"
//	properties                  object of schemas
//	required                    array of distinct strings
//	additionalProperties        boolean
//	items                       one schema, applied to every element
//	enum                        non-empty array of scalars (string, number, boolean, null)
//	const                       a scalar
//	minimum, maximum,
//	exclusiveMinimum,
//	exclusiveMaximum            numbers (compared exactly)
//	minLength, maxLength        non-negative integers (code points)
//	minItems, maxItems          non-negative integers
//	pattern                     a Go (RE2) regular expression, unanchored
//	description, title          strings: annotations, not enforced
//	default                     any JSON: annotation
//	examples                    array of any JSON: annotation
//
// Keywords are applied the way JSON Schema 2020-12 applies them: a keyword
// for one type ignores instances of another (minLength says nothing about
// a number), and "integer" admits 1.0.
var Keywords = []string{
	"type", "properties", "required", "additionalProperties", "items",
	"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems", "pattern",
	"description", "title", "default", "examples",
}

var typeNames = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// OutputSchemaError is a schema outside the supported subset. It lists every
// violation (schema path and keyword), not just the first.
type OutputSchemaError struct {
	Violations []Violation
}

func (e *OutputSchemaError) Error() string {
	return joinViolations("structured: unsupported output schema", e.Violations)
}

// ValidationError is a value that does not satisfy a schema, or is not
// plain JSON data. It lists every violation with its path in the value.
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	return joinViolations("structured: value does not match the output schema", e.Violations)
}

// AssertSupported checks that schema is plain JSON data in the supported
// subset with an object root. It returns nil or an *OutputSchemaError.
func AssertSupported(schema any) error {
	_, err := compile(schema)
	return err
}

// Validate checks value against schema. An unsupported schema is an
// *OutputSchemaError; a value that is not plain JSON data, or that breaks
// the schema, is a *ValidationError listing every violation. Non-JSON data
// is reported alone: validating a value that cannot be sent is moot.
func Validate(schema, value any) error {
	n, err := compile(schema)
	if err != nil {
		return err
	}
	var vs []Violation
	doc := plain(value, "", &vs)
	if len(vs) == 0 {
		n.validate(doc, "", &vs)
	}
	if len(vs) > 0 {
		return &ValidationError{Violations: vs}
	}
	return nil
}

// node is one compiled schema.
type node struct {
	types                []string
	properties           map[string]*node
	propertyNames        []string // sorted, for deterministic output
	required             []string
	closed               bool // additionalProperties: false
	items                *node
	enum                 []any
	constant             any
	hasConst             bool
	minimum, maximum     *big.Rat
	exclMin, exclMax     *big.Rat
	minLength, maxLength int // -1 when unset
	minItems, maxItems   int // -1 when unset
	pattern              *regexp.Regexp
}

func compile(schema any) (*node, error) {
	var vs []Violation
	doc := plain(schema, "", &vs)
	if len(vs) > 0 {
		return nil, &OutputSchemaError{Violations: vs}
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, &OutputSchemaError{Violations: []Violation{{Message: "the schema must be an object"}}}
	}
	if root["type"] != "object" {
		vs = append(vs, Violation{Keyword: "type", Message: `the root must have "type": "object"`})
	}
	n := compileNode(root, "", &vs)
	if len(vs) > 0 {
		return nil, &OutputSchemaError{Violations: vs}
	}
	return n, nil
}

func compileNode(s map[string]any, path string, vs *[]Violation) *node {
	n := &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	bad := func(kw, format string, args ...any) {
		*vs = append(*vs, Violation{Path: path + "/" + escape(kw), Keyword: kw, Message: fmt.Sprintf(format, args...)})
	}
	for _, kw := range slices.Sorted(maps.Keys(s)) {
		v := s[kw]
		switch kw {
		case "type":
			switch t := v.(type) {
			case string:
				if !slices.Contains(typeNames, t) {
					bad(kw, "unknown type %q", t)
				}
				n.types = []string{t}
			case []any:
				if len(t) == 0 {
					bad(kw, "an empty type list admits nothing")
				}
				for _, e := range t {
					s, ok := e.(string)
					if !ok || !slices.Contains(typeNames, s) || slices.Contains(n.types, s) {
						bad(kw, "type list entries must be distinct type names")
						break
					}
					n.types = append(n.types, s)
				}
			default:
				bad(kw, "must be a type name or a list of them")
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				bad(kw, "must be an object of schemas")
				continue
			}
			n.properties = map[string]*node{}
			for _, name := range slices.Sorted(maps.Keys(props)) {
				sub, ok := props[name].(map[string]any)
				p := path + "/properties/" + escape(name)
				if !ok {
					*vs = append(*vs, Violation{Path: p, Keyword: kw, Message: "a property schema must be an object"})
					continue
				}
				n.properties[name] = compileNode(sub, p, vs)
				n.propertyNames = append(n.propertyNames, name)
			}
		case "required":
			list, ok := v.([]any)
			if !ok {
				bad(kw, "must be an array of property names")
				continue
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok || slices.Contains(n.required, s) {
					bad(kw, "entries must be distinct strings")
					break
				}
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				bad(kw, "only true or false is supported, not a schema")
				continue
			}
			n.closed = !b
		case "items":
			sub, ok := v.(map[string]any)
			if !ok {
				bad(kw, "must be one schema (tuple forms are not supported)")
				continue
			}
			n.items = compileNode(sub, path+"/items", vs)
		case "enum":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				bad(kw, "must be a non-empty array")
				continue
			}
			for _, e := range list {
				if !isScalar(e) {
					bad(kw, "entries must be scalars (string, number, boolean or null)")
					break
				}
			}
			n.enum = list
		case "const":
			if !isScalar(v) {
				bad(kw, "must be a scalar (string, number, boolean or null)")
				continue
			}
			n.constant, n.hasConst = v, true
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			num, ok := v.(json.Number)
			if !ok {
				bad(kw, "must be a number")
				continue
			}
			r := rat(num)
			switch kw {
			case "minimum":
				n.minimum = r
			case "maximum":
				n.maximum = r
			case "exclusiveMinimum":
				n.exclMin = r
			default:
				n.exclMax = r
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			num, ok := v.(json.Number)
			r := rat(num)
			if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > 1<<31 {
				bad(kw, "must be a non-negative integer")
				continue
			}
			i := int(r.Num().Int64())
			switch kw {
			case "minLength":
				n.minLength = i
			case "maxLength":
				n.maxLength = i
			case "minItems":
				n.minItems = i
			default:
				n.maxItems = i
			}
		case "pattern":
			s, ok := v.(string)
			if !ok {
				bad(kw, "must be a string")
				continue
			}
			re, err := regexp.Compile(s)
			if err != nil {
				bad(kw, "not a Go (RE2) regular expression: %v", err)
				continue
			}
			n.pattern = re
		case "description", "title":
			if _, ok := v.(string); !ok {
				bad(kw, "must be a string")
			}
		case "default":
			// Any JSON: plain() has checked it is data.
		case "examples":
			if _, ok := v.([]any); !ok {
				bad(kw, "must be an array")
			}
		default:
			bad(kw, "unsupported keyword (supported: %s)", strings.Join(Keywords, ", "))
		}
	}
	return n
}

func (n *node) validate(v any, path string, vs *[]Violation) {
	bad := func(kw, format string, args ...any) {
		*vs = append(*vs, Violation{Path: path, Keyword: kw, Message: fmt.Sprintf(format, args...)})
	}
	if n.types != nil && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		bad("type", "expected %s, got %s", strings.Join(n.types, " or "), typeOf(v))
		return // the type-specific keywords would only repeat it
	}
	if n.hasConst && !scalarEqual(v, n.constant) {
		bad("const", "must be %s", show(n.constant))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return scalarEqual(v, e) }) {
		shown := make([]string, len(n.enum))
		for i, e := range n.enum {
			shown[i] = show(e)
		}
		bad("enum", "must be one of %s", strings.Join(shown, ", "))
	}
	switch v := v.(type) {
	case json.Number:
		r := rat(v)
		if n.minimum != nil && r.Cmp(n.minimum) < 0 {
			bad("minimum", "must be ≥ %s", n.minimum.RatString())
		}
		if n.maximum != nil && r.Cmp(n.maximum) > 0 {
			bad("maximum", "must be ≤ %s", n.maximum.RatString())
		}
		if n.exclMin != nil && r.Cmp(n.exclMin) <= 0 {
			bad("exclusiveMinimum", "must be > %s", n.exclMin.RatString())
		}
		if n.exclMax != nil && r.Cmp(n.exclMax) >= 0 {
			bad("exclusiveMaximum", "must be < %s", n.exclMax.RatString())
		}
	case string:
		if n.minLength >= 0 || n.maxLength >= 0 {
			l := utf8.RuneCountInString(v)
			if l < n.minLength {
				bad("minLength", "must be at least %d characters", n.minLength)
			}
			if n.maxLength >= 0 && l > n.maxLength {
				bad("maxLength", "must be at most %d characters", n.maxLength)
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			bad("pattern", "must match %s", n.pattern)
		}
	case []any:
		if len(v) < n.minItems {
			bad("minItems", "must have at least %d items", n.minItems)
		}
		if n.maxItems >= 0 && len(v) > n.maxItems {
			bad("maxItems", "must have at most %d items", n.maxItems)
		}
		if n.items != nil {
			for i, e := range v {
				n.items.validate(e, fmt.Sprintf("%s/%d", path, i), vs)
			}
		}
	case map[string]any:
		for _, name := range n.required {
			if _, ok := v[name]; !ok {
				bad("required", "missing required property %q", name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(v)) {
			sub, ok := n.properties[name]
			switch {
			case ok:
				sub.validate(v[name], path+"/"+escape(name), vs)
			case n.closed:
				*vs = append(*vs, Violation{Path: path + "/" + escape(name), Keyword: "additionalProperties",
					Message: fmt.Sprintf("unknown property %q", name)})
			}
		}
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "integer":
		n, ok := v.(json.Number)
		return ok && rat(n).IsInt()
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return typeOf(v) == t
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, bool, string, json.Number:
		return true
	}
	return false
}

// scalarEqual is JSON equality against a scalar: numbers by value (1 ==
// 1.0), everything else by type and value.
func scalarEqual(v, scalar any) bool {
	if a, ok := v.(json.Number); ok {
		b, ok := scalar.(json.Number)
		return ok && rat(a).Cmp(rat(b)) == 0
	}
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return v == scalar
}

func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok { // plain() admits only valid JSON numbers
		return new(big.Rat)
	}
	return r
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
