package acp

import (
	"bytes"
	"encoding/json"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"reflect"
	"testing"
	"unicode/utf8"
)

// The hand-written encoder must write exactly what encoding/json writes. These tests build
// the same value twice, once as the package's types and once as plain structs with explicit
// tag fields (the "flat" form encoding/json encodes by reflection alone), and compare bytes.

type refText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type refDiff struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	Meta    Meta    `json:"_meta,omitempty"`
}

type refBlock struct {
	Type    string  `json:"type"`
	Content refText `json:"content"`
}

type refTerminal struct {
	Type       string `json:"type"`
	TerminalID string `json:"terminalId"`
}

type refLocation struct {
	Path string  `json:"path"`
	Line *uint32 `json:"line,omitempty"`
	Meta Meta    `json:"_meta,omitempty"`
}

type refToolCallUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Title         *string           `json:"title,omitempty"`
	Name          *string           `json:"name,omitempty"`
	Kind          *string           `json:"kind,omitempty"`
	Status        *string           `json:"status,omitempty"`
	Content       []json.RawMessage `json:"content,omitzero"`
	Locations     []refLocation     `json:"locations,omitzero"`
	RawInput      json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage   `json:"rawOutput,omitempty"`
	Meta          Meta              `json:"_meta,omitempty"`
}

type refChunk struct {
	SessionUpdate string  `json:"sessionUpdate"`
	Content       refText `json:"content"`
	MessageID     *string `json:"messageId,omitempty"`
	Meta          Meta    `json:"_meta,omitempty"`
}

type refNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
	Meta      Meta            `json:"_meta,omitempty"`
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildPair returns a tool_call_update and its flat reference, shaped by the bits of mask.
func buildPair(t *testing.T, mask uint16, s1, s2, s3 string, line uint32, raw []byte) (SessionUpdate, refToolCallUpdate) {
	has := func(bit uint) bool { return mask&(1<<bit) != 0 }
	u := &ToolCallUpdate{ToolCallID: s1}
	r := refToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: s1}
	if has(0) {
		u.Title, r.Title = Ptr(s2), Ptr(s2)
	}
	if has(1) {
		u.Name, r.Name = Ptr(s3), Ptr(s3)
	}
	if has(2) {
		u.Kind, r.Kind = Ptr(ToolKind(s2)), Ptr(s2)
	}
	if has(3) {
		u.Status, r.Status = Ptr(ToolCallStatus(s3)), Ptr(s3)
	}
	if has(4) { // empty but present arrays
		u.Content, r.Content = []ToolCallContent{}, []json.RawMessage{}
		u.Locations, r.Locations = []ToolCallLocation{}, []refLocation{}
	}
	if has(5) {
		var old *string
		if has(6) {
			old = Ptr(s2)
		}
		u.Content = append(u.Content, Diff(s1, old, s3))
		r.Content = append(r.Content, mustMarshal(t, refDiff{Type: "diff", Path: s1, OldText: old, NewText: s3}))
	}
	if has(7) {
		u.Content = append(u.Content, ToolText(s2), Terminal(s3))
		r.Content = append(r.Content, mustMarshal(t, refBlock{Type: "content", Content: refText{Type: "text", Text: s2}}),
			mustMarshal(t, refTerminal{Type: "terminal", TerminalID: s3}))
	}
	if has(8) {
		l := ToolCallLocation{Path: s3}
		rl := refLocation{Path: s3}
		if has(9) {
			l.Line, rl.Line = Ptr(line), Ptr(line)
		}
		u.Locations, r.Locations = append(u.Locations, l), append(r.Locations, rl)
	}
	if json.Valid(raw) && len(raw) > 0 {
		if has(10) {
			u.RawInput, r.RawInput = raw, raw
		}
		if has(11) {
			u.RawOutput, r.RawOutput = raw, raw
		}
		if has(12) {
			u.Meta, r.Meta = raw, raw
		}
		if has(13) && len(u.Content) > 0 {
			u.Content = append(u.Content, Diff(s1, nil, s2))
			u.Content[len(u.Content)-1].Value.(*ToolCallDiff).Meta = raw
			r.Content = append(r.Content, mustMarshal(t, refDiff{Type: "diff", Path: s1, NewText: s2, Meta: raw}))
		}
	}
	return Update(u), r
}

// repairedUTF8 is what the codec makes of encoding/json's output:
// encoding/json copies a json.RawMessage's bytes as they are, and the codec
// replaces invalid UTF-8 in them with \ufffd, as encoding/json does in
// strings (FuzzAppendValidUTF8 checks that replacement on its own).
func repairedUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return jsonscan.AppendValidUTF8(nil, b)
}

func checkEncodeMatches(t *testing.T, mask uint16, s1, s2, s3 string, line uint32, raw []byte) {
	u, r := buildPair(t, mask, s1, s2, s3, line, raw)
	want := repairedUTF8(mustMarshal(t, r))
	if got := mustMarshal(t, u); !bytes.Equal(got, want) {
		t.Fatalf("json.Marshal differs\n got %s\nwant %s", got, want)
	}
	direct, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct, want) {
		t.Fatalf("MarshalJSON differs\n got %s\nwant %s", direct, want)
	}
	n := SessionNotification{SessionID: s2, Update: u, Meta: r.Meta}
	wantN := repairedUTF8(mustMarshal(t, refNotification{SessionID: s2, Update: want, Meta: r.Meta}))
	if got := mustMarshal(t, n); !bytes.Equal(got, wantN) {
		t.Fatalf("notification differs\n got %s\nwant %s", got, wantN)
	}
	chunk := AgentMessage(s3)
	chunk.Value.(*AgentMessageChunk).MessageID = r.Title
	wantC := mustMarshal(t, refChunk{SessionUpdate: "agent_message_chunk", Content: refText{Type: "text", Text: s3}, MessageID: r.Title})
	if got := mustMarshal(t, chunk); !bytes.Equal(got, wantC) {
		t.Fatalf("chunk differs\n got %s\nwant %s", got, wantC)
	}
}

// nastyStrings exercise every escaping rule of encoding/json.
var nastyStrings = []string{
	"", "plain", "quote\" back\\slash /", "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"line\u2028para\u2029", "bad utf8 \xff\xfe and \xc3", "truncated \xe2\x80", "é ü 日本 🎉",
	"func main() {\n\tfmt.Println(\"hi\")\n}\n",
}

func TestFastEncodeMatchesEncodingJSON(t *testing.T) {
	raws := [][]byte{nil, []byte(`{"a": [1, 2.50, "<&>"] }`), []byte(`  12345678901234567890 `), []byte(`"\u2028 x"`)}
	for mask := range uint16(1 << 14) {
		if mask%7 != 0 && mask != 1<<14-1 { // a spread of combinations keeps the test fast
			continue
		}
		i := int(mask)
		checkEncodeMatches(t, mask, nastyStrings[i%len(nastyStrings)], nastyStrings[(i/3)%len(nastyStrings)],
			nastyStrings[(i/5)%len(nastyStrings)], uint32(i)*977, raws[(i/11)%len(raws)])
	}
}

func FuzzFastEncode(f *testing.F) {
	for i, s := range nastyStrings {
		f.Add(uint16(i*2731), s, nastyStrings[(i+1)%len(nastyStrings)], "x", uint32(i), []byte(`{"k":[1,"<"]}`))
	}
	f.Fuzz(func(t *testing.T, mask uint16, s1, s2, s3 string, line uint32, raw []byte) {
		if got, want := jsonscan.AppendString(nil, s1), mustMarshal(t, s1); !bytes.Equal(got, want) {
			t.Fatalf("jsonscan.AppendString(%q) = %s, want %s", s1, got, want)
		}
		checkEncodeMatches(t, mask, s1, s2, s3, line, raw)
	})
}

// decodeBoth decodes data into a fresh T with the fast decoders on and off and fails the test
// unless both agree on the value and on the error.
func decodeBoth[T any](t *testing.T, data []byte) {
	t.Helper()
	var fast, slow T
	errFast := json.Unmarshal(data, &fast)
	fastDecodeOff.Store(true)
	errSlow := json.Unmarshal(data, &slow)
	fastDecodeOff.Store(false)
	if (errFast == nil) != (errSlow == nil) || (errFast != nil && errFast.Error() != errSlow.Error()) {
		t.Fatalf("decoding %q: fast error %v, generic error %v", data, errFast, errSlow)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("decoding %q:\n fast %#v\n slow %#v", data, fast, slow)
	}
}

// decodeAllBoth runs decodeBoth for every type with a fast decoder, also through a direct
// UnmarshalJSON call (which, unlike json.Unmarshal, sees surrounding space and invalid input).
func decodeAllBoth(t *testing.T, data []byte) {
	t.Helper()
	decodeBoth[SessionUpdate](t, data)
	decodeBoth[ToolCallContent](t, data)
	decodeBoth[ContentBlock](t, data)
	decodeBoth[SessionNotification](t, data)
	decodeBoth[SessionNotification](t, []byte(`{"sessionId":"s","update":`+string(data)+`}`))
	decodeBoth[SessionNotification](t, []byte(`{"_meta":{"a":1},"update":`+string(data)+`,"sessionId":"s","x":[1]}`))
	var fast, slow SessionUpdate
	errFast := fast.UnmarshalJSON(data)
	fastDecodeOff.Store(true)
	errSlow := slow.UnmarshalJSON(data)
	fastDecodeOff.Store(false)
	if (errFast == nil) != (errSlow == nil) || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("direct UnmarshalJSON(%q): fast %#v (%v), generic %#v (%v)", data, fast, errFast, slow, errSlow)
	}
}

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

func TestFastDecodeMatchesGeneric(t *testing.T) {
	for _, s := range decodeSeeds {
		decodeAllBoth(t, []byte(s))
	}
	// The first seeds are in the fast subset, so the comparison above is not vacuous.
	for _, s := range decodeSeeds[:5] {
		if _, ok := fastSessionUpdate([]byte(s)); !ok {
			t.Errorf("fast path declined %s", s)
		}
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { decodeAllBoth(t, data) })
}

// TestFastEncodeFallbacks covers the shapes the hand-written encoder hands to encoding/json
// (other content variants, unknown variants, annotations, _meta): its output must equal the
// reflection encoding of the same variant struct, which is what the generic path writes.
func TestFastEncodeFallbacks(t *testing.T) {
	unknown := ContentBlock{&UnknownContent{Type: "video", Raw: json.RawMessage(`{ "type" : "video", "src" : "<a&b>" }`)}}
	blocks := []ContentBlock{
		Text("t"), unknown, Image("AA==", "image/png"), Link("file:///a", "a"), EmbeddedText("file:///b", "b"),
		{&TextContent{Text: "x", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: Ptr(0.5)}, Meta: Meta(`{"k": 1}`)}},
	}
	var content []ToolCallContent
	for _, b := range blocks {
		content = append(content, ToolContent(b))
	}
	content = append(content, ToolCallContent{&UnknownToolCallContent{Type: "x", Raw: json.RawMessage("{\"type\":\"x\",\n\"v\":\"\u2028\"}")}},
		ToolCallContent{&ToolCallTerminal{TerminalID: "t", Meta: Meta(`[1, 2]`)}})
	variants := []SessionUpdateVariant{
		&ToolCallUpdate{ToolCallID: "c", Content: content, RawInput: json.RawMessage(`{"cmd": "a && b"}`)},
		&ToolCall{ToolCallID: "c", Title: "t", Kind: ToolKindEdit, Content: content, Locations: []ToolCallLocation{{Path: "p", Meta: Meta(`{}`)}}},
		&AgentThoughtChunk{Content: unknown, MessageID: Ptr("m")},
		&UserMessageChunk{Content: Image("AA==", "image/png"), Meta: Meta(`{"a":"<"}`)},
		&Plan{Entries: nil},
		&UnknownSessionUpdate{Tag: "future", Raw: json.RawMessage(`{"sessionUpdate": "future"}`)},
	}
	for _, v := range variants {
		got, err := json.Marshal(Update(v))
		if err != nil {
			t.Fatal(err)
		}
		generic, err := marshalTagged("sessionUpdate", "SessionUpdate", v)
		if err != nil {
			t.Fatal(err)
		}
		want := mustMarshal(t, json.RawMessage(generic)) // compacted, as json.Marshal would
		if !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s\nwant %s", v, got, want)
		}
	}
	for _, bad := range []SessionUpdate{{}, Update(&ToolCallUpdate{Content: []ToolCallContent{{}}}), Update((*ToolCall)(nil)),
		Update(&AgentMessageChunk{}), Update(&ToolCallUpdate{Meta: Meta(`{bad`)})} {
		if out, err := json.Marshal(bad); err == nil {
			t.Errorf("%#v marshalled to %s, want an error", bad.Value, out)
		}
	}
}
