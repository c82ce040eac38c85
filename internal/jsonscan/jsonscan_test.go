package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/internal/jsonscan"
)

var nastyStrings = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "line\nbreak\r\ttab\b\f",
	"\x00\x01\x1f\x7f", "é ü ß 日本 🎉", "\u2028 and \u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80",
	"\ufffd", "/slash/",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range nastyStrings {
		want, _ := json.Marshal(s)
		if got := jsonscan.AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// FuzzAppendString holds AppendString to json.Marshal, byte for byte, and Unescape to
// json.Unmarshal on what json.Marshal wrote.
func FuzzAppendString(f *testing.F) {
	for _, s := range nastyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		got := jsonscan.AppendString(nil, s)
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		if u := jsonscan.Unescape(got[1 : len(got)-1]); u != back {
			t.Fatalf("Unescape(%s) = %q, want %q", got, u, back)
		}
	})
}

// FuzzUnescape: for any body encoding/json accepts as a string, Unescape decodes it to the
// same string.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a`, `\n\t\"\\\/`, `\u00e9`, `\ud83c\udf89`, `\ud800`, `\udc00x`, `\ud800\u0041`, "\xff", `\u0000`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var want string
		if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil {
			return
		}
		if got := jsonscan.Unescape([]byte(body)); got != want {
			t.Fatalf("Unescape(%q) = %q, want %q", body, got, want)
		}
	})
}

func TestHex4(t *testing.T) {
	for _, tc := range []struct {
		in   string
		at   int
		want rune
		ok   bool
	}{
		{`\u00e9`, 2, 'é', true}, {`\uFFFD`, 2, '\ufffd', true}, {`\uD83c`, 2, 0xD83C, true},
		{`\u00e`, 2, 0, false}, {`\u00g9`, 2, 0, false}, {`abcd`, -1, 0, false}, {`0000`, 0, 0, true},
	} {
		got, ok := jsonscan.Hex4([]byte(tc.in), tc.at)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Hex4(%q, %d) = %U, %v; want %U, %v", tc.in, tc.at, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzAppendValidUTF8: whatever the bytes, the output is valid UTF-8; valid UTF-8 is copied
// as it is; and JSON stays JSON that encoding/json decodes to the same value (it decodes each
// invalid byte of a string as U+FFFD, which is what the \ufffd escape says).
func FuzzAppendValidUTF8(f *testing.F) {
	for _, s := range []string{`{"p":"a"}`, "{\"p\":\"\xff\"}", "[\"\xc3\",\"\xe2\x82\",\"\xed\xa0\x80\",\"\xf4\x90\x80\x80\"]", "\"\xef\xbf\xbd\"", "\xff", `"\u00e9 é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := jsonscan.AppendValidUTF8([]byte("x"), b)[1:]
		if !utf8.Valid(out) {
			t.Fatalf("%q -> %q: not UTF-8", b, out)
		}
		if utf8.Valid(b) && !bytes.Equal(out, b) {
			t.Fatalf("%q -> %q: valid UTF-8 changed", b, out)
		}
		var want, got any
		if json.Unmarshal(b, &want) != nil {
			return
		}
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q -> %q: decodes to %#v (%v), want %#v", b, out, got, err, want)
		}
	})
}
