package acp

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// The hand-built envelopes must be exactly what encoding/json writes for the same message
// (members in envelope order), whatever the params or result.
func TestEnvelopeMatchesEncodingJSON(t *testing.T) {
	note := SessionNotification{SessionID: "s<1>", Update: AgentMessage("a & b\n\u2028"), Meta: Meta(`{"k": [1, 2]}`)}
	values := []struct {
		name string
		v    any
	}{
		{"notification value", note},
		{"notification pointer", &note},
		{"nil notification pointer", (*SessionNotification)(nil)},
		{"raw with spaces and html", json.RawMessage(` {"a" : "<b>", "c": [1, 2 ]} `)},
		{"nil raw", json.RawMessage(nil)},
		{"request struct", &PromptRequest{SessionID: "s1", Prompt: []ContentBlock{Text("hi")}}},
		{"cancel request", CancelRequestNotification{RequestID: IntRequestID(7)}},
		{"map", map[string]any{"z": 1, "a": "x"}},
		{"empty result", struct{}{}},
	}
	type notification struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	type request struct {
		JSONRPC string `json:"jsonrpc"`
		ID      uint64 `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			check := func(kind string, got []byte, err error, want any) {
				t.Helper()
				w, werr := json.Marshal(want)
				if err != nil || werr != nil {
					t.Fatalf("%s: errors %v / %v", kind, err, werr)
				}
				if string(got) != string(w)+"\n" {
					t.Errorf("%s:\n got %s\nwant %s", kind, got, w)
				}
			}
			got, err := appendNotification(nil, "session/update", tc.v)
			check("notification", got, err, notification{"2.0", "session/update", tc.v})
			// Requests and responses go through jsonrpc2 with params or result encoded by
			// appendValue; jsonrpc2's OnSend hook builds their lines with appendRPCMessage.
			raw, err := appendValue(nil, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			params := json.RawMessage(raw)
			got, ok := appendRPCMessage(nil, &jsonrpc2.Request{Method: "fs/read_text_file", ID: jsonrpc2.ID{Num: 42}, Params: &params}, nil)
			check("request", got, boolErr(ok), request{"2.0", 42, "fs/read_text_file", tc.v})
			got, ok = appendRPCMessage(nil, nil, &jsonrpc2.Response{ID: jsonrpc2.ID{Str: "id-a", IsString: true}, Result: &params})
			check("response", got, boolErr(ok), response{"2.0", json.RawMessage(`"id-a"`), tc.v})
		})
	}
	t.Run("no params", func(t *testing.T) {
		got, err := appendNotification(nil, "n", nil)
		if err != nil || string(got) != `{"jsonrpc":"2.0","method":"n"}`+"\n" {
			t.Errorf("got %s, %v", got, err)
		}
	})
}

func boolErr(ok bool) error {
	if !ok {
		return errors.New("not built")
	}
	return nil
}

func TestErrorResponseEnvelope(t *testing.T) {
	tests := []struct {
		name string
		id   json.RawMessage
		err  *Error
		want string
	}{
		{"null id", nil, &Error{Code: CodeParseError, Message: "parse error"}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{"data", json.RawMessage(`7`), ResourceNotFound("file:///a<b>"), `{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"resource not found: file:///a\u003cb\u003e","data":{"uri":"file:///a\u003cb\u003e"}}}`},
		{"data compacted", json.RawMessage(`"x"`), &Error{Code: 1, Message: "m", Data: json.RawMessage("[1,\n 2]")}, `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":[1,2]}}`},
		{"invalid data dropped", json.RawMessage(`1`), &Error{Code: 1, Message: "m", Data: json.RawMessage("{")}, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := appendErrorResponse(nil, tc.id, tc.err); string(got) != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestAppendTrustedRaw(t *testing.T) {
	tests := []struct {
		name, raw, want string
		err             bool
	}{
		{"compact is copied", `{"a":"<"}`, `{"a":"<"}`, false},
		{"line breaks are compacted", "{\"a\":\n [1,\r\n2]}", `{"a":[1,2]}`, false},
		{"invalid with a line break", "{\"a\":\n", "", true},
		{"empty", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendTrustedRaw(nil, json.RawMessage(tc.raw))
			if (err != nil) != tc.err || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestRPCID: a $/cancel_request id names a request the way jsonrpc2 reads the request's own
// id.
func TestRPCID(t *testing.T) {
	same := [][2]string{{`"a"`, `"\u0061"`}, {`0`, `-0`}, {`12`, `12`}}
	for _, p := range same {
		a, okA := rpcID(json.RawMessage(p[0]))
		b, okB := rpcID(json.RawMessage(p[1]))
		if !okA || !okB || a != b {
			t.Errorf("%s and %s are different ids (%v %v, %v %v)", p[0], p[1], a, okA, b, okB)
		}
	}
	if a, _ := rpcID(json.RawMessage(`"1"`)); a == (jsonrpc2.ID{Num: 1}) {
		t.Error(`"1" and 1 are the same id`)
	}
	for _, bad := range []string{`-1`, `1.5`, `null`, `{}`, ``} {
		if _, ok := rpcID(json.RawMessage(bad)); ok {
			t.Errorf("%q accepted as an id", bad)
		}
	}
	// The ids jsonrpc2 itself reads from the same spellings.
	for _, raw := range []string{`"a"`, `"\u0061"`, `0`, `12`} {
		var req jsonrpc2.Request
		if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"method":"m"}`), &req); err != nil {
			t.Fatal(err)
		}
		if got, _ := rpcID(json.RawMessage(raw)); got != req.ID {
			t.Errorf("rpcID(%s) = %v, jsonrpc2 reads %v", raw, got, req.ID)
		}
	}
}

// FuzzFastEnvelope: whatever fastEnvelope accepts, json.Unmarshal accepts too, with the same
// envelope.
func FuzzFastEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"a":[1,2,{"b":null}]}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}},"x":{"y":[true,false]}}`,
		`{"jsonrpc":"2.0","id":"a\u0062","result":null}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"m","data":[1.5e3]}}`,
		`{"jsonrpc":"2.0","ID":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
		`{"jsonrpc":"2\u002e0","method":"m"}`,
		`{"jsonrpc":null,"method":"m"}`,
		`{"jsonrpc":"2.0","method":"m","params":{"a":01}}`,
		`{"jsonrpc":"2.0","method":"m","params":{"a":"\ud800"}}`,
		`{"jsonrpc":"2.0","method":"m",}`,
		` {"jsonrpc":"2.0","method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := fastEnvelope(line)
		if !ok {
			return
		}
		var slow wireMessage
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fastEnvelope accepted %q, json.Unmarshal: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\n fast %+v\n slow %+v", line, fast, slow)
		}
	})
}
