package acp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The tagged unions must encode exactly as a plain struct carrying its tag would. These tests
// build the same value twice, once as the package's types and once as plain structs with
// explicit tag fields (the "flat" form encoding/json encodes by reflection alone), and compare
// bytes. (FuzzEncodeMatchesFlat was FuzzFastEncode, the differential test of the hand-written
// encoder this package had; the same property now holds for the one encoder there is.)

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

func checkEncodeMatches(t *testing.T, mask uint16, s1, s2, s3 string, line uint32, raw []byte) {
	u, r := buildPair(t, mask, s1, s2, s3, line, raw)
	want := mustMarshal(t, r)
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
	wantN := mustMarshal(t, refNotification{SessionID: s2, Update: want, Meta: r.Meta})
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

func TestEncodeMatchesFlat(t *testing.T) {
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

func FuzzEncodeMatchesFlat(f *testing.F) {
	for i, s := range nastyStrings {
		f.Add(uint16(i*2731), s, nastyStrings[(i+1)%len(nastyStrings)], "x", uint32(i), []byte(`{"k":[1,"<"]}`))
	}
	f.Fuzz(func(t *testing.T, mask uint16, s1, s2, s3 string, line uint32, raw []byte) {
		checkEncodeMatches(t, mask, s1, s2, s3, line, raw)
	})
}

// TestUnionEncodeErrors: a zero wrapper, a nil variant and invalid raw JSON fail to marshal,
// at any depth.
func TestUnionEncodeErrors(t *testing.T) {
	for _, bad := range []SessionUpdate{{}, Update(&ToolCallUpdate{Content: []ToolCallContent{{}}}), Update((*ToolCall)(nil)),
		Update(&AgentMessageChunk{}), Update(&ToolCallUpdate{Meta: Meta(`{bad`)})} {
		if out, err := json.Marshal(bad); err == nil {
			t.Errorf("%#v marshalled to %s, want an error", bad.Value, out)
		}
	}
}
