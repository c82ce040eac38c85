package pipeline

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// DefaultMaxArgumentBytes is the default limit on the size of a call's raw
// arguments.
const DefaultMaxArgumentBytes = 1 << 20

// maxDepth bounds the nesting of arguments, so that hostile input cannot
// exhaust the stack of the validator or of a tool's decoder.
const maxDepth = 512

// ArgumentsError says why a call's raw arguments were rejected before any
// policy ran. It becomes an INVALID_ARGS result.
type ArgumentsError struct {
	// Offset is the byte offset of the problem in the raw arguments, or -1.
	Offset int
	Reason string
}

func (e *ArgumentsError) Error() string {
	if e.Offset < 0 {
		return "invalid arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid arguments at byte %d: %s", e.Offset, e.Reason)
}

// ErrorCode is the registry error code of the failure.
func (e *ArgumentsError) ErrorCode() string { return "INVALID_ARGS" }

// canonicalArguments validates raw call arguments and returns their
// canonical form.
//
// Accepted: exactly one JSON object (RFC 8259) in valid UTF-8, at most max
// bytes, no duplicate member names at any depth (names compared after
// unescaping), no lone UTF-16 surrogate escapes, nesting at most maxDepth.
// Empty (zero-length) arguments mean an empty object: a Go caller passing
// nil means "no arguments"; whitespace alone is rejected.
//
// Canonical form: the input with insignificant whitespace removed; member
// order, string escapes and numbers exactly as written. That keeps numbers
// lossless (no float64 rounding) and makes the canonical bytes a pure
// function of the input, so the circuit breaker's "identical call" and the
// approval's "what the human saw" are both defined on these bytes. Every
// decoder (a guard's, the tool's) decodes the same bytes to the same
// values, because nothing ambiguous (duplicates, invalid UTF-8, lone
// surrogates) is accepted.
func canonicalArguments(in []byte, max int) (string, error) {
	if len(in) == 0 {
		return "{}", nil
	}
	if len(in) > max {
		return "", &ArgumentsError{Offset: -1, Reason: fmt.Sprintf("arguments are %d bytes; the limit is %d", len(in), max)}
	}
	v := validator{in: in}
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
		return "", &ArgumentsError{Offset: v.i, Reason: "no JSON value"}
	}
	if in[v.i] != '{' {
		return "", &ArgumentsError{Offset: v.i, Reason: "arguments must be a JSON object"}
	}
	if err := v.value(0); err != nil {
		return "", err
	}
	v.skipSpace()
	if v.i != len(in) {
		return "", &ArgumentsError{Offset: v.i, Reason: "trailing data after the JSON object"}
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

// validator is a strict single-pass JSON validator. Keys of the objects
// being validated are kept on one shared stack for the duplicate check.
type validator struct {
	in       []byte
	i        int
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
	return &ArgumentsError{Offset: v.i, Reason: fmt.Sprintf(format, args...)}
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
	if depth > maxDepth {
		return v.errorf("nesting deeper than %d", maxDepth)
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
				ref.decoded = unescape(in[ref.start:ref.end])
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
		r, ok := hex4(in, v.i+1)
		if !ok {
			return v.errorf("invalid \\u escape")
		}
		v.i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return v.errorf("lone low surrogate \\u%04X", r)
		case r >= 0xD800 && r <= 0xDBFF:
			if v.i+1 < len(in) && in[v.i] == '\\' && in[v.i+1] == 'u' {
				if lo, ok := hex4(in, v.i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
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

func hex4(in []byte, at int) (rune, bool) {
	if at+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the body of a valid JSON string.
func unescape(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(s, i+2)
			i += 6
			if r >= 0xD800 && r <= 0xDBFF {
				lo, _ := hex4(s, i+2)
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // " \ /
			out = append(out, s[i+1])
		}
		i += 2
	}
	return string(out)
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
				return &ArgumentsError{Offset: at, Reason: fmt.Sprintf("duplicate member name %q", name)}
			}
			seen[name] = struct{}{}
		default:
			for _, prev := range v.keys[base:] {
				if v.sameKey(prev, k) {
					return &ArgumentsError{Offset: at, Reason: fmt.Sprintf("duplicate member name %q", v.keyString(k))}
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
