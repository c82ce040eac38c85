package registry

import (
	"math"
	"regexp"
	"slices"
	"unicode/utf8"
)

// checker is a derived schema compiled for the common case: it answers
// only "valid or not", without allocating. Define's decode path runs it
// first; when it says "invalid", the santhosh-tekuri schema (compiled from
// the same SchemaProp) is run to produce the authoritative list of issues.
// It therefore decides acceptance on its own, which is why it implements
// exactly the keywords jsonSchema emits and why a differential fuzz test
// (FuzzValidateArgs) holds it to santhosh-tekuri's verdict.
//
// It exists because santhosh-tekuri's general validator allocates per
// keyword and costs about four times a bare json.Unmarshal of a small
// argument object, over the budget of three.
type checker struct {
	typ            SchemaType
	enum           []string
	min, max       float64 // ±Inf when unset
	minLen, maxLen int     // -1 when unset (strings and arrays)
	pattern        *regexp.Regexp
	props          map[string]*checker
	required       []string
	items, values  *checker
}

func newChecker(p *SchemaProp) *checker {
	c := &checker{typ: p.Type, enum: p.Enum, min: math.Inf(-1), max: math.Inf(1), minLen: -1, maxLen: -1}
	if p.Minimum != nil {
		c.min = *p.Minimum
	}
	if p.Maximum != nil {
		c.max = *p.Maximum
	}
	for _, n := range []*int{p.MinLength, p.MinItems} {
		if n != nil {
			c.minLen = *n
		}
	}
	for _, n := range []*int{p.MaxLength, p.MaxItems} {
		if n != nil {
			c.maxLen = *n
		}
	}
	if p.Pattern != "" {
		c.pattern = regexp.MustCompile(p.Pattern) // compiled once already at derivation
	}
	if p.Type == TypeObject && p.Values == nil {
		c.props = make(map[string]*checker, len(p.Properties))
		for name, sub := range p.Properties {
			c.props[name] = newChecker(&sub)
			if sub.Required {
				c.required = append(c.required, name)
			}
		}
	}
	if p.Items != nil {
		c.items = newChecker(p.Items)
	}
	if p.Values != nil {
		c.values = newChecker(p.Values)
	}
	return c
}

// valid reports whether v (as encoding/json parses into any) satisfies c.
func (c *checker) valid(v any) bool {
	switch c.typ {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return false
		}
		if c.enum != nil && !slices.Contains(c.enum, s) {
			return false
		}
		if c.minLen >= 0 || c.maxLen >= 0 {
			n := utf8.RuneCountInString(s)
			if n < c.minLen || (c.maxLen >= 0 && n > c.maxLen) {
				return false
			}
		}
		return c.pattern == nil || c.pattern.MatchString(s)
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeNumber, TypeInteger:
		f, ok := v.(float64)
		if !ok || (c.typ == TypeInteger && f != math.Trunc(f)) {
			return false
		}
		return f >= c.min && f <= c.max
	case TypeArray:
		a, ok := v.([]any)
		if !ok || len(a) < c.minLen || (c.maxLen >= 0 && len(a) > c.maxLen) {
			return false
		}
		if c.items != nil {
			for _, e := range a {
				if !c.items.valid(e) {
					return false
				}
			}
		}
		return true
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if c.values != nil {
			for _, e := range m {
				if !c.values.valid(e) {
					return false
				}
			}
			return true
		}
		for _, name := range c.required {
			if _, ok := m[name]; !ok {
				return false
			}
		}
		for k, e := range m {
			sub, ok := c.props[k]
			if !ok || !sub.valid(e) {
				return false
			}
		}
		return true
	}
	return false
}
