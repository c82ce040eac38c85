package jsonscan

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// SyntaxError is why [Canonical] refused its input.
type SyntaxError struct {
	// Offset is the byte offset of the problem in the input.
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Reason) }

// Canonical validates in as exactly one JSON value (RFC 8259), stricter
// than encoding/json where two decoders could disagree: valid UTF-8 only,
// no duplicate member names at any depth (compared after unescaping), no
// lone UTF-16 surrogate escapes, nesting at most maxDepth. It returns the
// canonical form: in with insignificant whitespace removed, member order,
// string escapes and numbers exactly as written (so numbers stay
// lossless), which encoding/json decodes to the same values as in.
//
// It is the one validating JSON scanner of the module (the tool
// pipeline's arguments go through it) because encoding/json accepts
// duplicate names, lone surrogates and invalid UTF-8, which this must
// refuse, not because of speed.
func Canonical(in []byte, maxDepth int) (string, error) {
	v := validator{in: in, maxDepth: maxDepth}
	keys := keysPool.Get().(*[]keyRef)
	v.keys = (*keys)[:0]
	defer func() {
		if cap(v.keys) <= 1024 {
			clear(v.keys[:cap(v.keys)]) // drop decoded strings
			*keys = v.keys[:0]
			keysPool.Put(keys)
		}
	}()
	v.skipSpace()
	if v.i >= len(in) {
		return "", &SyntaxError{Offset: v.i, Reason: "no JSON value"}
	}
	if err := v.value(0); err != nil {
		return "", err
	}
	v.skipSpace()
	if v.i != len(in) {
		return "", &SyntaxError{Offset: v.i, Reason: "trailing data after the JSON value"}
	}
	if !v.sawSpace {
		return string(in), nil
	}
	return compact(in), nil
}

// compact removes whitespace outside strings from valid JSON.
func compact(in []byte) string {
	out := make([]byte, 0, len(in))
	inString, escaped := false, false
	start := 0
	for i, c := range in {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out = append(out, in[start:i]...)
			start = i + 1
		}
	}
	out = append(out, in[start:]...)
	return string(out)
}

// validator is a strict single-pass JSON validator (see [Canonical]). Keys of the objects
// being validated are kept on one shared stack for the duplicate check.
type validator struct {
	in       []byte
	i        int
	maxDepth int
	sawSpace bool
	keys     []keyRef
}

// keysPool recycles the member-name stacks of validators.
var keysPool = sync.Pool{New: func() any { s := make([]keyRef, 0, 32); return &s }}

// keyRef is a member name: raw bytes in[start:end] when it had no escapes,
// otherwise its decoded value.
type keyRef struct {
	start, end int
	decoded    string
	escaped    bool
}

func (v *validator) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: v.i, Reason: fmt.Sprintf(format, args...)}
}

func (v *validator) skipSpace() {
	for v.i < len(v.in) {
		switch v.in[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
			v.sawSpace = true
		default:
			return
		}
	}
}

func (v *validator) value(depth int) error {
	if depth > v.maxDepth {
		return v.errorf("nesting deeper than %d", v.maxDepth)
	}
	if v.i >= len(v.in) {
		return v.errorf("unexpected end of input")
	}
	switch c := v.in[v.i]; {
	case c == '{':
		return v.object(depth)
	case c == '[':
		return v.array(depth)
	case c == '"':
		_, err := v.str(false)
		return err
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	default:
		// NaN, Infinity, single quotes, bare words all land here.
		return v.errorf("invalid character %q looking for a value", rune(c))
	}
}

func (v *validator) literal(word string) error {
	if len(v.in)-v.i < len(word) || string(v.in[v.i:v.i+len(word)]) != word {
		return v.errorf("invalid literal (only true, false and null are JSON literals)")
	}
	v.i += len(word)
	return nil
}

func (v *validator) number() error {
	in := v.in
	if in[v.i] == '-' {
		v.i++
	}
	switch {
	case v.i < len(in) && in[v.i] == '0':
		v.i++
	case v.i < len(in) && in[v.i] >= '1' && in[v.i] <= '9':
		for v.i < len(in) && in[v.i] >= '0' && in[v.i] <= '9' {
			v.i++
		}
	default:
		return v.errorf("invalid number (Infinity and NaN are not JSON)")
	}
	if v.i < len(in) && in[v.i] == '.' {
		v.i++
		if v.i >= len(in) || in[v.i] < '0' || in[v.i] > '9' {
			return v.errorf("invalid number: digit expected after the decimal point")
		}
		for v.i < len(in) && in[v.i] >= '0' && in[v.i] <= '9' {
			v.i++
		}
	}
	if v.i < len(in) && (in[v.i] == 'e' || in[v.i] == 'E') {
		v.i++
		if v.i < len(in) && (in[v.i] == '+' || in[v.i] == '-') {
			v.i++
		}
		if v.i >= len(in) || in[v.i] < '0' || in[v.i] > '9' {
			return v.errorf("invalid number: digit expected in the exponent")
		}
		for v.i < len(in) && in[v.i] >= '0' && in[v.i] <= '9' {
			v.i++
		}
	}
	return nil
}

// str validates a string starting at the opening quote and returns its
// reference; a member name (isKey) with escapes is decoded for the
// duplicate check.
func (v *validator) str(isKey bool) (keyRef, error) {
	in := v.in
	v.i++ // opening quote
	ref := keyRef{start: v.i}
	for v.i < len(in) {
		c := in[v.i]
		switch {
		case c == '"':
			ref.end = v.i
			v.i++
			if ref.escaped && isKey {
				ref.decoded = Unescape(in[ref.start:ref.end])
			}
			return ref, nil
		case c == '\\':
			ref.escaped = true
			if err := v.escape(); err != nil {
				return ref, err
			}
		case c < 0x20:
			return ref, v.errorf("control character %#x in a string", c)
		case c < utf8.RuneSelf:
			v.i++
		default:
			r, size := utf8.DecodeRune(in[v.i:])
			if r == utf8.RuneError && size <= 1 {
				return ref, v.errorf("invalid UTF-8")
			}
			v.i += size
		}
	}
	return ref, v.errorf("unterminated string")
}

func (v *validator) escape() error {
	in := v.in
	v.i++ // backslash
	if v.i >= len(in) {
		return v.errorf("unterminated escape")
	}
	switch in[v.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		v.i++
		return nil
	case 'u':
		r, ok := Hex4(in, v.i+1)
		if !ok {
			return v.errorf("invalid \\u escape")
		}
		v.i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return v.errorf("lone low surrogate \\u%04X", r)
		case r >= 0xD800 && r <= 0xDBFF:
			if v.i+1 < len(in) && in[v.i] == '\\' && in[v.i+1] == 'u' {
				if lo, ok := Hex4(in, v.i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					v.i += 6
					return nil
				}
			}
			return v.errorf("lone high surrogate \\u%04X", r)
		}
		return nil
	default:
		return v.errorf("invalid escape \\%c", in[v.i])
	}
}

func (v *validator) sameKey(a, b keyRef) bool {
	as, bs := a.decoded, b.decoded
	if !a.escaped {
		if !b.escaped {
			return string(v.in[a.start:a.end]) == string(v.in[b.start:b.end])
		}
		return string(v.in[a.start:a.end]) == bs
	}
	if !b.escaped {
		return as == string(v.in[b.start:b.end])
	}
	return as == bs
}

func (v *validator) keyString(k keyRef) string {
	if k.escaped {
		return k.decoded
	}
	return string(v.in[k.start:k.end])
}

// linearKeys is the number of members up to which duplicates are found by
// a linear scan; larger objects switch to a map.
const linearKeys = 16

func (v *validator) object(depth int) error {
	v.i++ // {
	base := len(v.keys)
	defer func() { v.keys = v.keys[:base] }()
	var seen map[string]struct{}
	v.skipSpace()
	if v.i < len(v.in) && v.in[v.i] == '}' {
		v.i++
		return nil
	}
	for {
		if v.i >= len(v.in) || v.in[v.i] != '"' {
			return v.errorf("member name (a string) expected")
		}
		at := v.i
		k, err := v.str(true)
		if err != nil {
			return err
		}
		switch n := len(v.keys) - base; {
		case seen != nil:
			name := v.keyString(k)
			if _, dup := seen[name]; dup {
				return &SyntaxError{Offset: at, Reason: fmt.Sprintf("duplicate member name %q", name)}
			}
			seen[name] = struct{}{}
		default:
			for _, prev := range v.keys[base:] {
				if v.sameKey(prev, k) {
					return &SyntaxError{Offset: at, Reason: fmt.Sprintf("duplicate member name %q", v.keyString(k))}
				}
			}
			v.keys = append(v.keys, k)
			if n+1 >= linearKeys {
				seen = make(map[string]struct{}, 2*linearKeys)
				for _, prev := range v.keys[base:] {
					seen[v.keyString(prev)] = struct{}{}
				}
			}
		}
		v.skipSpace()
		if v.i >= len(v.in) || v.in[v.i] != ':' {
			return v.errorf("':' expected after a member name")
		}
		v.i++
		v.skipSpace()
		if err := v.value(depth + 1); err != nil {
			return err
		}
		v.skipSpace()
		if v.i >= len(v.in) {
			return v.errorf("unexpected end of input in an object")
		}
		switch v.in[v.i] {
		case ',':
			v.i++
			v.skipSpace()
		case '}':
			v.i++
			return nil
		default:
			return v.errorf("',' or '}' expected in an object")
		}
	}
}

func (v *validator) array(depth int) error {
	v.i++ // [
	v.skipSpace()
	if v.i < len(v.in) && v.in[v.i] == ']' {
		v.i++
		return nil
	}
	for {
		if err := v.value(depth + 1); err != nil {
			return err
		}
		v.skipSpace()
		if v.i >= len(v.in) {
			return v.errorf("unexpected end of input in an array")
		}
		switch v.in[v.i] {
		case ',':
			v.i++
			v.skipSpace()
		case ']':
			v.i++
			return nil
		default:
			return v.errorf("',' or ']' expected in an array")
		}
	}
}
