package bridge

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// FuzzFeaturesOf: whatever capabilities (and _meta) a client sends, the
// features the bridge derives from them never panic.
func FuzzFeaturesOf(f *testing.F) {
	for _, s := range []string{`{}`, `{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true}}`,
		`{"_meta":{"terminal_output":true}}`, `{"_meta":{"terminal_output":"yes"}}`, `{"_meta":null}`, `{"_meta":[1]}`,
		`{"session":{"configOptions":{"boolean":{}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c acp.ClientCapabilities
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		featuresOf(c)
	})
}

// FuzzParseMessageNumber: only plain decimal digits within int32 give a
// number, and it is the number they spell.
func FuzzParseMessageNumber(f *testing.F) {
	for _, s := range []string{"", "0", "7", "0012", "-1", "+3", "1e3", "99999999999", " 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, digits string) {
		n := parseMessageNumber(digits)
		if n < 0 {
			t.Fatalf("%q gave %d", digits, n)
		}
		if n > 0 && strings.TrimLeft(digits, "0") != strconv.Itoa(n) {
			t.Fatalf("%q gave %d", digits, n)
		}
	})
}
