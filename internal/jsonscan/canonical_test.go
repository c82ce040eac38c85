package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzCanonical holds Canonical to encoding/json: what it accepts is valid
// JSON in valid UTF-8, its canonical form is what json.Compact makes of it
// and decodes to the same value, and canonicalisation is idempotent.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{}`, `[1, 2]`, ` { "a" : [1, 2.5e3, "x\u00e9"], "b": {"c": null} } `, `"\ud83d\ude00"`,
		`{"a":1,"a":2}`, `{"a":NaN}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":1} x`, `{"\u0061":1,"a":2}`, `[[[[1]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Canonical(in, 3)
		if err != nil {
			return
		}
		if !json.Valid(in) || !utf8.Valid(in) {
			t.Fatalf("accepted %q", in)
		}
		var compacted bytes.Buffer
		if err := json.Compact(&compacted, in); err != nil || compacted.String() != got {
			t.Fatalf("canonical form %q of %q, json.Compact %q (%v)", got, in, compacted.String(), err)
		}
		if a, b := decode(t, in), decode(t, []byte(got)); !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form %q decodes differently from %q", got, in)
		}
		if again, err := Canonical([]byte(got), 3); err != nil || again != got {
			t.Fatalf("not idempotent: %q → %q, %v", got, again, err)
		}
	})
}

// decode decodes valid JSON, numbers as written.
func decode(t *testing.T, in []byte) any {
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCanonicalRejects(t *testing.T) {
	for _, in := range []string{``, `  `, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `"\ud800"`, `"\udc00"`, "\"\xff\"", `[[[[[1]]]]]`, `{} {}`, `NaN`, `'a'`} {
		if got, err := Canonical([]byte(in), 3); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", in, got)
		}
	}
}
