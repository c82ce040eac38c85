package anthropic

import (
	"encoding/json"
	"testing"
)

// FuzzParseError: any error body is read without panicking, and a body
// that is the API's error shape yields its type and message.
func FuzzParseError(f *testing.F) {
	for _, s := range []string{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, `{}`, `[]`, `{"error":"x"}`, `<html>`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		typ, msg := parseError(body)
		var v struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &v) == nil && (typ != v.Error.Type || msg != v.Error.Message) {
			t.Fatalf("parseError(%s) = %q, %q; want %q, %q", body, typ, msg, v.Error.Type, v.Error.Message)
		}
	})
}
