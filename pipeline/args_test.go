package pipeline

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalArgumentsAccepts(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty means empty object", "", "{}"},
		{"compact stays", `{"a":1}`, `{"a":1}`},
		{"whitespace removed", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\":{ } } ", `{"a":[1,2],"b":{}}`},
		{"space inside strings kept", `{ "a b" : " x  y " }`, `{"a b":" x  y "}`},
		{"escaped quote and space", `{"a":"\" x \\ "  }`, `{"a":"\" x \\ "}`},
		{"numbers as written", `{"a":1.0,"b":-0,"c":1E+2,"d":123456789012345678901234567890}`, `{"a":1.0,"b":-0,"c":1E+2,"d":123456789012345678901234567890}`},
		{"escapes as written", `{"a":"\u00e9\n\/","b":"\ud83d\ude00"}`, `{"a":"\u00e9\n\/","b":"\ud83d\ude00"}`},
		{"same key in sibling objects", `{"a":{"x":1},"b":{"x":2}}`, `{"a":{"x":1},"b":{"x":2}}`},
		{"key order kept", `{"z":1,"a":2}`, `{"z":1,"a":2}`},
		{"literals", `{"t":true,"f":false,"n":null}`, `{"t":true,"f":false,"n":null}`},
		{"utf8", `{"k":"héllo ✓ 😀"}`, `{"k":"héllo ✓ 😀"}`},
		{"many keys", manyKeys(40, false), manyKeys(40, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonicalArguments([]byte(tt.in), DefaultMaxArgumentBytes)
			if err != nil {
				t.Fatalf("canonicalArguments(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("canonicalArguments(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func manyKeys(n int, dup bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`":1`)
	}
	if dup {
		b.WriteString(`,"k` + strings.Repeat("x", n/2) + `":2`)
	}
	b.WriteString("}")
	return b.String()
}

func TestCanonicalArgumentsRejects(t *testing.T) {
	tests := []struct {
		name, in, reason string
	}{
		{"whitespace only", "  ", "no JSON value"},
		{"not an object", `[1]`, "must be a JSON object"},
		{"string", `"x"`, "must be a JSON object"},
		{"truncated", `{"a":1`, "end of input"},
		{"trailing data", `{"a":1} x`, "trailing data"},
		{"two values", `{}{}`, "trailing data"},
		{"NaN", `{"a":NaN}`, "looking for a value"},
		{"Infinity", `{"a":Infinity}`, "looking for a value"},
		{"-Infinity", `{"a":-Infinity}`, "invalid number"},
		{"leading zero", `{"a":01}`, "',' or '}'"},
		{"bare dot", `{"a":1.}`, "decimal point"},
		{"bad exponent", `{"a":1e}`, "exponent"},
		{"single quotes", `{'a':1}`, "member name"},
		{"trailing comma", `{"a":1,}`, "member name"},
		{"duplicate key", `{"a":1,"a":2}`, `duplicate member name "a"`},
		{"duplicate key via escape", `{"a":1,"\u0061":2}`, `duplicate member name "a"`},
		{"duplicate nested", `{"x":[{"b":1,"b":1}]}`, `duplicate member name "b"`},
		{"duplicate among many", manyKeys(40, true), "duplicate member name"},
		{"invalid utf8", "{\"a\":\"\xff\"}", "invalid UTF-8"},
		{"invalid utf8 in key", "{\"\xc3\":1}", "invalid UTF-8"},
		{"control char", "{\"a\":\"\x01\"}", "control character"},
		{"lone high surrogate", `{"a":"\ud800"}`, "lone high surrogate"},
		{"lone low surrogate", `{"a":"\udc00x"}`, "lone low surrogate"},
		{"bad escape", `{"a":"\x"}`, "invalid escape"},
		{"short unicode escape", `{"a":"\u12"}`, `invalid \u escape`},
		{"bad literal", `{"a":tru}`, "invalid literal"},
		{"too deep", strings.Repeat(`{"a":`, maxDepth+2) + "1" + strings.Repeat("}", maxDepth+2), "nesting deeper"},
		{"too large", `{"a":"` + strings.Repeat("x", 100) + `"}`, "the limit is 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonicalArguments([]byte(tt.in), 64+len(tt.in)*boolInt(tt.name != "too large"))
			var ae *ArgumentsError
			if !errors.As(err, &ae) {
				t.Fatalf("canonicalArguments(%q) = %q, %v; want an *ArgumentsError", tt.in, got, err)
			}
			if !strings.Contains(ae.Error(), tt.reason) {
				t.Errorf("error %q does not mention %q", ae.Error(), tt.reason)
			}
			if ae.ErrorCode() != "INVALID_ARGS" {
				t.Errorf("code = %q", ae.ErrorCode())
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzCanonicalArguments checks the validator against encoding/json: what
// it accepts is valid JSON, its canonical form is valid JSON that decodes
// to the same value as the input, and canonicalisation is idempotent.
func FuzzCanonicalArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` { "a" : [1, 2.5e3, "x\u00e9"], "b": {"c": null} } `,
		`{"a":1,"a":2}`, `{"a":NaN}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":1} x`, `[]`, `{"\u0061":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := canonicalArguments(in, DefaultMaxArgumentBytes)
		if err != nil {
			return
		}
		if len(in) > 0 && !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if !json.Valid([]byte(got)) || !utf8.ValidString(got) {
			t.Fatalf("canonical form %q of %q is not valid JSON", got, in)
		}
		if len(in) > 0 {
			var a, b any
			if err := json.Unmarshal(in, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("canonical form %q decodes differently from %q", got, in)
			}
		}
		again, err := canonicalArguments([]byte(got), DefaultMaxArgumentBytes)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q → %q, %v", got, again, err)
		}
	})
}
