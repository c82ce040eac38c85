package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// variant is implemented by every member of every tagged union in this package. wireTag is the
// discriminator value the variant is written with; the union's wrapper decides which key
// ("type", "sessionUpdate", "outcome", …) carries it.
type variant interface{ wireTag() string }

// unknownVariant is a variant whose tag this package does not know. It is re-emitted verbatim,
// so a client's or a newer agent's payload survives a decode/encode round trip unchanged.
type unknownVariant interface {
	variant
	raw() json.RawMessage
}

// marshalTagged writes v's own JSON object with key:v.wireTag() spliced in as the first member.
// There is no map round trip, so key order and number text of the variant survive.
func marshalTagged(key string, union string, v variant) ([]byte, error) {
	if isNilVariant(v) {
		return nil, fmt.Errorf("acp: cannot marshal an empty %s", union)
	}
	if u, ok := v.(unknownVariant); ok {
		if len(u.raw()) == 0 {
			return nil, fmt.Errorf("acp: unknown %s %q has no payload", union, u.wireTag())
		}
		return u.raw(), nil
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return spliceTag(key, v.wireTag(), body)
}

// spliceTag returns {"key":"tag", …body's members}. body must be a JSON object.
func spliceTag(key, tag string, body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("acp: variant %q did not marshal to a JSON object", tag)
	}
	out := make([]byte, 0, len(body)+len(key)+len(tag)+6)
	out = append(out, '{', '"')
	out = append(out, key...)
	out = append(out, '"', ':', '"')
	out = append(out, tag...)
	out = append(out, '"')
	if len(body) > 2 { // not "{}"
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// isNilVariant reports whether v is nil or a typed nil pointer.
func isNilVariant(v variant) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// unmarshalTagged decodes data into the variant its key names. Known tags decode into a fresh
// value from table; unknown tags become unknown(tag, copy of data). A missing tag is an error.
// A JSON null leaves *dst unchanged, as encoding/json does for other types.
func unmarshalTagged[V variant](data []byte, key, union string, table map[string]func() V, unknown func(tag string, raw json.RawMessage) V, dst *V) error {
	if isJSONNull(data) {
		return nil
	}
	raw, found, err := lookupKey(data, key)
	if err != nil {
		return fmt.Errorf("acp: decoding %s: %w", union, err)
	}
	if !found {
		return fmt.Errorf("acp: decoding %s: missing %q discriminator", union, key)
	}
	mk, ok := table[string(plainString(raw))] // no copy: tags are plain ASCII
	if !ok {
		var tag string
		if err := json.Unmarshal(raw, &tag); err != nil {
			return fmt.Errorf("acp: decoding %s: %q must be a string: %w", union, key, err)
		}
		if mk, ok = table[tag]; !ok {
			*dst = unknown(tag, bytes.Clone(data))
			return nil
		}
	}
	v := mk()
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("acp: decoding %s %q: %w", union, v.wireTag(), err)
	}
	*dst = v
	return nil
}

// plainString returns the body of the JSON string raw if it is printable ASCII without
// escapes, which is then exactly the string it decodes to; otherwise nil.
func plainString(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return nil
		}
	}
	return body
}

func isJSONNull(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

var errNotObject = errors.New("not a JSON object")

// lookupKey returns the raw value of the top-level member key of the JSON object data. It scans
// only as far as the key (our own encoder writes discriminators first), skipping other values
// without decoding them. Keys are compared byte-exactly after unescaping simple forms, which is
// what the protocol's case-sensitive keys need (encoding/json would match case-insensitively).
func lookupKey(data []byte, key string) (json.RawMessage, bool, error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false, errNotObject
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil, false, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false, errors.New("malformed object key")
		}
		kEnd, err := skipString(data, i)
		if err != nil {
			return nil, false, err
		}
		k := data[i:kEnd]
		i = skipWS(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false, errors.New("missing ':' after object key")
		}
		i = skipWS(data, i+1)
		vEnd, err := skipValue(data, i)
		if err != nil {
			return nil, false, err
		}
		if keyEquals(k, key) {
			return data[i:vEnd], true, nil
		}
		i = skipWS(data, vEnd)
		if i >= len(data) {
			return nil, false, errors.New("unterminated object")
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return nil, false, nil
		default:
			return nil, false, errors.New("malformed object")
		}
	}
}

// keyEquals compares a quoted JSON key with key. Keys with escapes are decoded first.
func keyEquals(quoted []byte, key string) bool {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return false
	}
	return s == key
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at data[i] == '"'.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// skipValue returns the index just past the JSON value starting at data[i]. It checks
// bracket balance and string termination only; full validation is left to encoding/json.
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("missing value")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated value")
	default: // number, true, false, null
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errors.New("missing value")
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}
