package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestMessageJSONRoundTrip(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Parts: []Part{&Text{Text: "hi"}, &Image{MIMEType: "image/png", Data: []byte{1, 2, 3}}}},
		{Role: RoleAssistant, Parts: []Part{
			&Reasoning{Text: "hmm", Signature: "sig", Provider: "anthropic"},
			&Reasoning{Redacted: "opaque", Provider: "anthropic"},
			&Text{Text: "ok"},
			&ToolCall{ID: "c1", Name: "read", Arguments: `{"path": 1`},
		}},
		{Role: RoleUser, Parts: []Part{&ToolResult{CallID: "c1", Name: "read", IsError: true, Content: []Part{&Text{Text: "bad"}, &Image{MIMEType: "image/gif", Data: []byte("G")}}}}},
		{Role: RoleAssistant, Parts: []Part{}},
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var got []Message
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, msgs) {
		t.Fatalf("round trip:\n%s\ngot %#v", b, got)
	}
	if !bytes.Contains(b, []byte(`{"type":"tool_call","id":"c1","name":"read","arguments":"{\"path\": 1"}`)) {
		t.Errorf("tool call encoding: %s", b)
	}
}

func TestMessageJSONErrors(t *testing.T) {
	for _, in := range []string{
		`{"role":"user","parts":[{"text":"no type"}]}`,
		`{"role":"user","parts":[{"type":"video"}]}`,
		`{"role":"user","parts":[{"type":"tool_result","callId":"c","content":[{"type":"tool_call","id":"x"}]}]}`,
		`{"role":"user","parts":[{"type":"text","text":5}]}`,
	} {
		var m Message
		if err := json.Unmarshal([]byte(in), &m); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	if _, err := json.Marshal(Message{Parts: []Part{nil}}); err == nil {
		t.Error("nil part marshalled")
	}
}

func FuzzMessageJSON(f *testing.F) {
	f.Add(`{"role":"assistant","parts":[{"type":"text","text":"a"},{"type":"tool_call","id":"1","name":"n","arguments":"{}"}]}`)
	f.Add(`{"role":"user","parts":[{"type":"tool_result","callId":"c","content":[{"type":"image","mimeType":"x","data":"AQI="}]}]}`)
	f.Add(`{"role":"assistant","parts":[{"type":"reasoning","signature":"s","redacted":"r"}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var m Message
		if json.Unmarshal([]byte(in), &m) != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal of a decoded message: %v", err)
		}
		var m2 Message
		if err := json.Unmarshal(b, &m2); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, _ := json.Marshal(m2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed:\n%s\n%s", b, b2)
		}
	})
}

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("sk-very-secret")
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "key", s)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "key", s)
	j, _ := json.Marshal(struct{ Key Secret }{s})
	out := fmt.Sprint(s) + fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s) + logs.String() + string(j)
	if strings.Contains(out, "sk-very-secret") {
		t.Fatalf("secret printed: %s", out)
	}
	if s.Reveal() != "sk-very-secret" {
		t.Fatal("Reveal")
	}
	if got := s.Scrub("bad key sk-very-secret!"); got != "bad key [redacted]!" {
		t.Errorf("Scrub = %q", got)
	}
	t.Setenv("DSHD_TEST_KEY_A", "")
	t.Setenv("DSHD_TEST_KEY_B", " v ")
	if v, name := SecretFromEnv("DSHD_TEST_KEY_A", "DSHD_TEST_KEY_B"); v.Reveal() != "v" || name != "DSHD_TEST_KEY_B" {
		t.Errorf("SecretFromEnv = %q, %q", v.Reveal(), name)
	}
}
