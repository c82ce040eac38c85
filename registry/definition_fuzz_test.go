package registry

import (
	"encoding/json"
	"testing"
)

// FuzzIsObjectOrNull holds checkDefinition's check of Parameters to what it
// replaced: exactly the bytes json.Unmarshal decodes into a map.
func FuzzIsObjectOrNull(f *testing.F) {
	for _, s := range []string{`{}`, ` {"type":"object"} `, `null`, ` null`, `[]`, `"x"`, `1`, `true`, ``, ` `, `{`, `{}{}`, `{} x`, "\t{}\n", `nul`, `{"a":}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var obj map[string]json.RawMessage
		want := json.Unmarshal(b, &obj) == nil
		if got := isObjectOrNull(b); got != want {
			t.Fatalf("isObjectOrNull(%q) = %v, json.Unmarshal into a map accepts it: %v", b, got, want)
		}
	})
}
