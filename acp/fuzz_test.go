package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// stable checks that decode → encode → decode → encode reaches a fixed point after one round:
// whatever a union decodes (known or unknown variant), it re-encodes to something that decodes
// to the same encoding.
func stable[T any](t *testing.T, data []byte) {
	var a T
	if json.Unmarshal(data, &a) != nil {
		return
	}
	first, err := json.Marshal(a)
	if err != nil {
		return // e.g. a null input leaves the wrapper empty
	}
	var b T
	if err := json.Unmarshal(first, &b); err != nil {
		t.Fatalf("re-decoding %s (from %q): %v", first, data, err)
	}
	second, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("re-encoding: %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("not stable:\n first %s\nsecond %s\n input %q", first, second, data)
	}
}

func seed(f *testing.F, extra ...string) {
	for _, s := range extra {
		f.Add([]byte(s))
	}
	f.Add([]byte(`null`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"type":"x","type":"text","text":"dup"}`))
}

func FuzzContentBlock(f *testing.F) {
	seed(f, `{"type":"text","text":"hi","annotations":{"priority":1}}`,
		`{"type":"resource","resource":{"uri":"u","blob":"AA=="}}`, `{"type":"image","data":"x","mimeType":"image/png"}`,
		`{"type":"video","x":[1,{"y":"}"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[ContentBlock](t, data) })
}

func FuzzSessionUpdate(f *testing.F) {
	seed(f, `{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"diff","path":"/a","newText":"x"}]}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`,
		`{"sessionUpdate":"session_info_update","title":null}`, `{"sessionUpdate":"plan","entries":[]}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[SessionUpdate](t, data) })
}

func FuzzToolCallContent(f *testing.F) {
	seed(f, `{"type":"content","content":{"type":"text","text":"x"}}`,
		`{"type":"diff","path":"/a","oldText":null,"newText":"x"}`, `{"type":"terminal","terminalId":"t"}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[ToolCallContent](t, data) })
}

func FuzzRequestPermissionOutcome(f *testing.F) {
	seed(f, `{"outcome":"selected","optionId":"a"}`, `{"outcome":"cancelled"}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[RequestPermissionOutcome](t, data) })
}

func FuzzSessionConfigOption(f *testing.F) {
	seed(f, `{"type":"select","id":"m","name":"M","currentValue":"a","options":[{"group":"g","name":"G","options":[]}]}`,
		`{"type":"boolean","id":"b","name":"B","currentValue":true}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[SessionConfigOption](t, data) })
}

func FuzzMCPServer(f *testing.F) {
	seed(f, `{"name":"x","command":"/x","args":[],"env":[]}`, `{"type":"stdio","name":"x","command":"/x"}`,
		`{"type":"http","name":"h","url":"u","headers":[]}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[MCPServer](t, data) })
}

func FuzzAuthMethod(f *testing.F) {
	seed(f, `{"id":"a","name":"A"}`, `{"type":"terminal","id":"t","name":"T","env":{"A":"1"}}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[AuthMethod](t, data) })
}

func FuzzElicitationPropertySchema(f *testing.F) {
	seed(f, `{"type":"string","minLength":1}`, `{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}`,
		`{"type":"array","items":{"type":"string","enum":["a"]}}`)
	f.Fuzz(func(t *testing.T, data []byte) { stable[ElicitationPropertySchema](t, data) })
}

func FuzzLookupKey(f *testing.F) {
	f.Add([]byte(`{"a":1,"type":"x"}`), "type")
	f.Add([]byte(`{"a":"\"}","b":[{"type":1}],"type":"y"}`), "type")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		raw, found, err := lookupKey(data, key)
		if err != nil || !json.Valid(data) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		want, ok := m[key]
		// encoding/json keeps the last duplicate key and lookupKey the first, so only compare
		// when the key occurs once.
		if strings.Count(string(data), `"`+key+`"`) == 1 && ok != found {
			t.Fatalf("lookupKey(%q, %q) found=%v, map has %v", data, key, found, ok)
		}
		if found && ok && strings.Count(string(data), `"`+key+`"`) == 1 && !bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(want)) {
			t.Fatalf("lookupKey(%q, %q) = %s, want %s", data, key, raw, want)
		}
	})
}

// FuzzLineReader feeds arbitrary input to the codec: it must never panic, every message it
// hands to jsonrpc2 must be one jsonrpc2 reads, and every reply it writes must be one valid
// JSON line of UTF-8.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n"))
	f.Add([]byte("not json\n\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n[1,2]\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"))
	f.Add([]byte("\xff\xfe\n{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"x\"}\n"))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"ID\":-0,\"Method\":\"x\",\"method\":\"y\",\"params\":null}\n{\"jsonrpc\":\"2.0\",\"id\":-0,\"error\":{\"code\":1,\"message\":\"m\",\"data\":[1]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := newCodec(pipeRWC{Reader: bytes.NewReader(data), write: out.Write}, nil, slog.New(slog.DiscardHandler))
		for i := 0; i < 1000; i++ {
			var m jsonrpc2Message
			if err := s.ReadObject(&m); err != nil {
				if err != io.EOF {
					t.Fatalf("ReadObject: %v", err)
				}
				break
			}
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) > 0 && (!json.Valid(line) || !utf8.Valid(line)) {
				t.Fatalf("wrote an invalid reply line %q", line)
			}
		}
	})
}

// jsonrpc2Message reads a message as jsonrpc2 does: as a request when it has a method, else as
// a response (jsonrpc2's own message type is unexported).
type jsonrpc2Message struct{}

func (*jsonrpc2Message) UnmarshalJSON(b []byte) error {
	var probe struct {
		Method *string `json:"method"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.Method != nil {
		var r jsonrpc2.Request
		return json.Unmarshal(b, &r)
	}
	var r jsonrpc2.Response
	return json.Unmarshal(b, &r)
}

// decodeSeeds are the session/update shapes the fast decoder this package had handled, and
// the near misses it had to decline.
var decodeSeeds = []string{
	`{"sessionUpdate":"tool_call_update","toolCallId":"call-42","title":"Edit main.go","status":"completed","content":[{"type":"diff","path":"/work/cmd/main.go","oldText":"func main() {\n\tfmt.Println(\"hi\")\n}\n","newText":"x\u00e9\u2028\/"}],"locations":[{"path":"/a","line":3}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"edit","status":"pending","content":[{"type":"content","content":{"type":"text","text":"hi","annotations":{"priority":0.5},"_meta":{"a":1}}},{"type":"terminal","terminalId":"t1"},{"type":"video","x":[1,{"y":"}"}]}],"rawInput":{"n":1.50},"rawOutput":[ 1 , 2 ],"_meta":{}}`,
	`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"m"}`,
	`{"sessionUpdate":"agent_thought_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`,
	`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"<&>"},"extra":[true,false,null,-0.5e+3]}`,
	`{"type":"diff","path":"p","newText":"n","oldText":null}`,
	`{"type":"diff","path":"p","newText":"n","NewText":"m"}`,
	`{"type":"diff","path":"p","path":"q","newText":"n"}`,
	`{"type":"text","text":"bad \ud800 surrogate","_meta":null}`,
	`{"type":"text","text":"ok"} `,
	` {"type":"mystery","z":1}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"p","line":4294967296}]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"p","line":01}]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[],"locations":[]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[null]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":5}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c",}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c"}x`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c\x01"}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"\xff"}`,
}

// FuzzDecodeSessionUpdate (was FuzzFastDecode): every union decodes to a value that
// re-encodes to a fixed point, and json.Unmarshal and a direct UnmarshalJSON call agree.
func FuzzDecodeSessionUpdate(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stable[SessionUpdate](t, data)
		stable[ToolCallContent](t, data)
		stable[ContentBlock](t, data)
		stable[SessionNotification](t, append(append([]byte(`{"sessionId":"s","update":`), data...), '}'))
		var viaJSON, direct SessionUpdate
		errJSON := json.Unmarshal(data, &viaJSON)
		if errJSON != nil || !json.Valid(data) {
			return
		}
		if err := direct.UnmarshalJSON(data); err != nil || !reflect.DeepEqual(viaJSON, direct) {
			t.Fatalf("UnmarshalJSON(%q) = %#v (%v), json.Unmarshal gives %#v", data, direct, err, viaJSON)
		}
	})
}

// FuzzCodecEnvelope (was FuzzFastEnvelope): whatever the codec accepts, json.Unmarshal
// accepts too, and jsonrpc2 reads the canonical form with the same method and id.
func FuzzCodecEnvelope(f *testing.F) {
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
		`{"jsonrpc":"2.0","method":"s\u0065ssion/update","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"caf\u00e9/é\"","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"","params":[]}`,
		`{"jsonrpc":"2.0","id":5,"method":null}`,
		`{"jsonrpc":2.0,"id":6,"method":"m"}`,
		`{"jsonrpc":"2.0","JSONRPC":"1.0","id":6,"method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		s := newCodec(pipeRWC{Reader: bytes.NewReader(nil), write: io.Discard.Write}, nil, slog.New(slog.DiscardHandler))
		m, ok := s.check(line)
		if !ok {
			return
		}
		var w wireMessage
		if err := json.Unmarshal(line, &w); err != nil {
			t.Fatalf("the codec accepted %q, json.Unmarshal: %v", line, err)
		}
		var version struct {
			JSONRPC *string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(line, &version); err != nil || version.JSONRPC == nil || *version.JSONRPC != "2.0" {
			t.Fatalf("the codec accepted %q, whose jsonrpc member encoding/json does not read as \"2.0\" (%v)", line, err)
		}
		canonical := m.canonical(nil)
		if !m.isCall {
			var r jsonrpc2.Response
			if err := json.Unmarshal(canonical, &r); err != nil {
				t.Fatalf("jsonrpc2 cannot read %s: %v", canonical, err)
			}
			return
		}
		var r jsonrpc2.Request
		if err := json.Unmarshal(canonical, &r); err != nil {
			t.Fatalf("jsonrpc2 cannot read %s: %v", canonical, err)
		}
		if r.Method != m.method || r.Notif != (m.id == nil) {
			t.Fatalf("jsonrpc2 read %s as %q notif=%v", canonical, r.Method, r.Notif)
		}
		if m.id != nil {
			if id, ok := rpcID(m.id); !ok || id != r.ID {
				t.Fatalf("id %s: jsonrpc2 reads %v, $/cancel_request would name %v", m.id, r.ID, id)
			}
		}
	})
}

// FuzzPlainString: what plainString takes as a JSON string's exact body is what encoding/json
// decodes the string to, and it takes every string of printable ASCII without escapes.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"tool_call_update"`, `""`, `"a\"b"`, `"caf\u00e9"`, "\"\x01\"", `"é"`, `"`, `x"`, `"session/update"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		body := plainString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if body != nil && (err != nil || string(body) != want) {
			t.Fatalf("plainString(%q) = %q, json.Unmarshal: %q, %v", raw, body, want, err)
		}
		printable := err == nil && len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !bytes.ContainsRune(raw[1:len(raw)-1], '\\')
		for _, c := range want {
			printable = printable && c >= 0x20 && c <= 0x7e
		}
		if printable && body == nil {
			t.Fatalf("plainString(%q) missed a plain string", raw)
		}
	})
}
