package structured

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Violation is one problem, located by an RFC 6901 JSON pointer ("" is the
// root) into the schema (for an [OutputSchemaError]) or the value (for a
// [ValidationError]).
type Violation struct {
	Path    string `json:"path"`
	Keyword string `json:"keyword,omitempty"` // the schema keyword at fault; empty for non-JSON data
	Message string `json:"message"`
}

func (v Violation) String() string {
	path := v.Path
	if path == "" {
		path = "(root)"
	}
	if v.Keyword == "" {
		return path + ": " + v.Message
	}
	return path + ": " + v.Keyword + ": " + v.Message
}

func joinViolations(head string, vs []Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d):", head, len(vs))
	for _, v := range vs {
		b.WriteString("\n- ")
		b.WriteString(v.String())
	}
	return b.String()
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	numberType    = reflect.TypeFor[json.Number]()
	rawType       = reflect.TypeFor[json.RawMessage]()
)

// plain converts a Go value into plain JSON data — map[string]any, []any,
// string, json.Number, bool, nil — and reports every part of it that would
// not survive a JSON round trip unchanged. Nothing is converted lossily:
//
//   - NaN and ±Inf, channels, funcs, complex numbers and unsafe pointers
//     have no JSON form;
//   - strings and keys must be valid UTF-8 (encoding/json would replace
//     bad bytes with U+FFFD);
//   - maps must have string keys (encoding/json would stringify an int key,
//     so the validator would see a different value from the one sent);
//   - structs and any type with its own MarshalJSON/MarshalText (time.Time)
//     are refused: their JSON shape is decided by code, not by the data, so
//     the walkers would reason about something other than the wire;
//     marshal them first;
//   - cyclic data is refused.
//
// json.RawMessage is parsed; json.Number must be a valid JSON number; nil
// pointers, interfaces, maps and slices are null, as encoding/json has it.
func plain(v any, path string, out *[]Violation) any {
	w := walker{out: out, seen: map[uintptr]bool{}}
	return w.value(reflect.ValueOf(v), path)
}

type walker struct {
	out  *[]Violation
	seen map[uintptr]bool // containers on the current path
}

func (w *walker) fail(path, format string, args ...any) {
	*w.out = append(*w.out, Violation{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (w *walker) value(v reflect.Value, path string) any {
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	switch t {
	case numberType:
		n := json.Number(v.String())
		return w.number(n, path)
	case rawType:
		if v.IsNil() {
			return nil
		}
		if !utf8.Valid(v.Bytes()) { // the decoder would turn it into U+FFFD
			w.fail(path, "json.RawMessage is not valid UTF-8")
			return nil
		}
		var doc any
		dec := json.NewDecoder(strings.NewReader(string(v.Bytes())))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil || dec.More() {
			w.fail(path, "json.RawMessage is not one JSON value")
			return nil
		}
		return w.value(reflect.ValueOf(doc), path) // checks its numbers
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface &&
		(t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
			(v.CanAddr() && (reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)))) {
		w.fail(path, "%s has custom JSON marshalling, which is not plain data; marshal it first", t)
		return nil
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return w.value(v.Elem(), path)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
			w.fail(path, "%s has custom JSON marshalling, which is not plain data; marshal it first", t)
			return nil
		}
		return w.container(v, path, func() any { return w.value(v.Elem(), path) })
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			w.fail(path, "string %q is not valid UTF-8; JSON would replace its bad bytes with U+FFFD", v.String())
			return nil
		}
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			w.fail(path, "%v is not a JSON number", f)
			return nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, t.Bits()))
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			w.fail(path, "map key type %s is not string; JSON object keys are strings", t.Key())
			return nil
		}
		if v.IsNil() {
			return nil
		}
		return w.container(v, path, func() any {
			m := make(map[string]any, v.Len())
			for it := v.MapRange(); it.Next(); {
				k := it.Key().String()
				if !utf8.ValidString(k) {
					w.fail(path, "key %q is not valid UTF-8; JSON would replace its bad bytes with U+FFFD", k)
					continue
				}
				m[k] = w.value(it.Value(), path+"/"+escape(k))
			}
			return m
		})
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		return w.container(v, path, func() any { return w.list(v, path) })
	case reflect.Array:
		return w.list(v, path)
	case reflect.Struct:
		w.fail(path, "a %s struct is not plain data (its JSON shape depends on tags); marshal it first", t)
		return nil
	default:
		w.fail(path, "a %s has no JSON form", t)
		return nil
	}
}

// maxExponent bounds the decimal exponent of a number. Numbers are compared
// exactly (as big.Rat), and 1e999999999 would take gigabytes to expand;
// float64 tops out near 1e308, so nothing a Go program produces is refused.
const maxExponent = 1000

func (w *walker) number(n json.Number, path string) any {
	if !isJSONNumber(string(n)) {
		w.fail(path, "json.Number %q is not a JSON number", n)
		return nil
	}
	if _, exp, ok := strings.Cut(strings.ToLower(string(n)), "e"); ok {
		if e, err := strconv.Atoi(exp); err != nil || e > maxExponent || e < -maxExponent {
			w.fail(path, "number %s is out of the supported range (exponent beyond ±%d)", n, maxExponent)
			return nil
		}
	}
	return n
}

func (w *walker) list(v reflect.Value, path string) any {
	a := make([]any, v.Len())
	for i := range a {
		a[i] = w.value(v.Index(i), path+"/"+strconv.Itoa(i))
	}
	return a
}

// container descends into a pointer, map or slice, refusing one that is
// already on the current path.
func (w *walker) container(v reflect.Value, path string, descend func() any) any {
	p := uintptr(v.UnsafePointer())
	if v.Kind() == reflect.Slice {
		p ^= uintptr(v.Len()) << 1 // a sub-slice of itself is not a cycle
	}
	if w.seen[p] {
		w.fail(path, "cyclic data")
		return nil
	}
	w.seen[p] = true
	defer delete(w.seen, p)
	return descend()
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		start := i + 1
		if i = digits(s, start); i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		if i = digits(s, start); i == start {
			return false
		}
	}
	return i == len(s)
}

// digits returns the index after the run of ASCII digits that starts at
// s[i] (i itself when there is none).
func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
