package model_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func TestPromptMessage(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG"))
	text := func(s string) acp.ContentBlock { return acp.Text(s) }
	link := func(uri, name string) acp.ContentBlock {
		return acp.ContentBlock{Value: &acp.ResourceLink{URI: uri, Name: name}}
	}
	embedded := func(uri, body string) acp.ContentBlock {
		return acp.ContentBlock{Value: &acp.EmbeddedResource{Resource: acp.ResourceContents{Value: &acp.TextResourceContents{URI: uri, Text: body}}}}
	}
	image := acp.ContentBlock{Value: &acp.ImageContent{Data: png, MIMEType: "image/png"}}
	for _, tc := range []struct {
		name   string
		block  acp.ContentBlock
		images bool
		want   []string // substrings of the text part; nil means an image part
	}{
		{"text", text("fix the bug"), false, []string{"fix the bug"}},
		{"link", link("file:///src/main.go", "main.go"), false, []string{"`/src/main.go`", "Read it with your tools"}},
		{"link other name", link("file:///src/a.go", "Alpha"), false, []string{"`/src/a.go` (Alpha)"}},
		{"selection", link("file:///src/main.go#L10:20", "main.go"), false, []string{"`/src/main.go` (lines 10-20)"}},
		{"one line", link("file:///src/main.go#L7", "main.go"), false, []string{"(line 7)"}},
		{"non-file link", link("https://example.com/x", "x"), false, []string{"`https://example.com/x`"}},
		{"embedded", embedded("file:///src/a.go", "package a\n"), false, []string{"Contents of `/src/a.go`:\n```\npackage a\n```"}},
		{"embedded with fence", embedded("file:///r.md", "```go\nx\n```"), false, []string{"````\n```go\nx\n```\n````"}},
		{"image without support", image, false, []string{"cannot see"}},
		{"image", image, true, nil},
		{"audio", acp.ContentBlock{Value: &acp.AudioContent{Data: png, MIMEType: "audio/wav"}}, true, []string{"audio"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model.PromptMessage([]acp.ContentBlock{tc.block}, tc.images)
			if m.Role != llm.RoleUser || len(m.Parts) != 1 {
				t.Fatalf("message %+v", m)
			}
			if tc.want == nil {
				img, ok := m.Parts[0].(*llm.Image)
				if !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG" {
					t.Fatalf("part %#v, want the image", m.Parts[0])
				}
				return
			}
			got := m.Text()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %q lacks %q", got, w)
				}
			}
		})
	}
}

func TestToolResult(t *testing.T) {
	call := &llm.ToolCall{ID: "c1", Name: "read"}
	img := base64.StdEncoding.EncodeToString([]byte("img"))
	res := registry.Result{
		Content: []presentation.Content{
			presentation.Text("hello"),
			{Type: presentation.ContentImage, Data: img, MIMEType: "image/png"},
			{Type: presentation.ContentResource, URI: "file:///a.txt", Text: "body"},
		},
		AdditionalContext: "note",
	}
	r := model.ToolResult(call, res)
	if r.CallID != "c1" || r.Name != "read" || r.IsError || len(r.Content) != 4 {
		t.Fatalf("result %+v", r)
	}
	if _, ok := r.Content[1].(*llm.Image); !ok {
		t.Errorf("part 1 = %#v, want an image", r.Content[1])
	}
	if got := r.Content[3].(*llm.Text).Text; got != "note" {
		t.Errorf("additional context %q", got)
	}
	empty := model.ToolResult(call, registry.Result{IsError: true, Error: &registry.ToolError{Code: "X", Message: "went wrong"}})
	if !empty.IsError || looptest.ResultText(empty) != "went wrong" {
		t.Errorf("error result %+v", empty)
	}
	if got := looptest.ResultText(model.ToolResult(call, registry.Result{})); got != "(no output)" {
		t.Errorf("empty result %q", got)
	}
}

func records(t testing.TB, msgs ...llm.Message) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range msgs {
		b, err := json.Marshal(map[string]any{"message": m})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestRebuildRepairsInterruptedCalls(t *testing.T) {
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "do it"}}}
	calls := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		&llm.Reasoning{Text: "hm", Signature: "sig", Provider: "anthropic"},
		&llm.ToolCall{ID: "a", Name: "read", Arguments: `{}`}, &llm.ToolCall{ID: "b", Name: "bash", Arguments: `{}`}}}
	partial := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.ToolResult{CallID: "a", Name: "read", Content: []llm.Part{&llm.Text{Text: "ok"}}}}}
	next := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "again"}}}

	recs := records(t, user, calls, partial, next)
	recs = append(recs, json.RawMessage(`{"other":"kind"}`), json.RawMessage(`not json`))
	got := model.Rebuild(recs)
	if len(got) != 4 {
		t.Fatalf("%d messages, want 4: %+v", len(got), got)
	}
	if r := got[1].Parts[0].(*llm.Reasoning); r.Signature != "sig" {
		t.Errorf("reasoning signature lost: %+v", r)
	}
	results := got[2].Parts
	if len(results) != 2 || results[1].(*llm.ToolResult).CallID != "b" || !results[1].(*llm.ToolResult).IsError {
		t.Errorf("results not completed: %+v", results)
	}

	// Calls with no results message at all get one.
	got = model.Rebuild(records(t, user, calls, next))
	if len(got) != 4 || !got[2].HasToolResults() || got[3].Text() != "again" {
		t.Errorf("missing results message not inserted: %+v", got)
	}
}

func TestSystemPrompt(t *testing.T) {
	info := bridge.SessionInfo{ID: "s", Cwd: "/work", Roots: []string{"/work", "/lib"}, Mode: policy.ModePlan}
	got := model.System{Info: info}.String()
	for _, want := range []string{"Working directory: /work", "- /lib"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	// Nothing that changes during a session, and no tool list: the
	// request carries the tools.
	for _, bad := range []string{"Session mode", "# Tools", "# Instructions", "# Project instructions", "# Skills", "No tools are available"} {
		if strings.Contains(got, bad) {
			t.Errorf("prompt has %q:\n%s", bad, got)
		}
	}
	if none := (model.System{Info: info, NoTools: true}).String(); !strings.Contains(none, "No tools are available") {
		t.Errorf("no-tools prompt:\n%s", none)
	}
	full := model.System{Info: info, Instructions: "Be brief.", Project: model.Project{
		Instructions: "Run make test.",
		Skills:       []model.Skill{{Name: "pdf", Description: "Fill PDF forms.\nMore.", Location: "/skills/pdf/SKILL.md"}},
	}}.String()
	// The sections come in their fixed order.
	at := func(s string) int {
		i := strings.Index(full, s)
		if i < 0 {
			t.Fatalf("prompt lacks %q:\n%s", s, full)
		}
		return i
	}
	if !(at("# Environment") < at("# Project instructions\nRun make test.") && at("Run make test.") < at("# Skills") &&
		at("- pdf: Fill PDF forms. (/skills/pdf/SKILL.md)\n") < at("# Instructions\nBe brief.")) {
		t.Errorf("sections out of order:\n%s", full)
	}
	if strings.Contains(full, "More.") {
		t.Errorf("skill description beyond its first line:\n%s", full)
	}
}

func TestModelConfigOption(t *testing.T) {
	l := model.New(model.Options{Provider: failing{}, Model: "big", Models: []string{"small", "big", ""}})
	if got := l.ModelChoices(); len(got) != 2 || got[0] != "big" || got[1] != "small" {
		t.Fatalf("choices %v", got)
	}
	opts := l.SessionConfigOptions("s1")
	sel, ok := opts[0].Value.(*acp.SelectConfigOption)
	if len(opts) != 1 || !ok || sel.ID != model.ConfigModel || *sel.Category != acp.ConfigCategoryModel || sel.CurrentValue != "big" {
		t.Fatalf("options %+v", opts)
	}
	if handled, err := l.SetSessionConfigOption("s1", "mode", "plan"); handled || err != nil {
		t.Errorf("mode handled by the loop: %v %v", handled, err)
	}
	if _, err := l.SetSessionConfigOption("s1", model.ConfigModel, "huge"); err == nil {
		t.Error("unknown model accepted")
	}
	if _, err := l.SetSessionConfigOption("s1", model.ConfigModel, "small"); err != nil {
		t.Fatal(err)
	}
	if cur := l.SessionConfigOptions("s1")[0].Value.(*acp.SelectConfigOption).CurrentValue; cur != "small" {
		t.Errorf("current %q", cur)
	}
	if cur := l.SessionConfigOptions("s2")[0].Value.(*acp.SelectConfigOption).CurrentValue; cur != "big" {
		t.Errorf("other session %q", cur)
	}
	if got := model.New(model.Options{Provider: failing{}}).SessionConfigOptions("s"); got != nil {
		t.Errorf("options without models: %+v", got)
	}
}

func FuzzRebuild(f *testing.F) {
	f.Add([]byte(`{"message":{"role":"user","parts":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"message":{"role":"assistant","parts":[{"type":"tool_call","id":"a","name":"x","arguments":"{"}]}}`))
	f.Add([]byte(`{"message":{"role":"user","parts":[{"type":"tool_result","callId":"a","content":[{"type":"text","text":"r"}]}]}}`))
	f.Add([]byte(`{"message":null}`))
	f.Add([]byte(`{"compaction":{"trigger":"auto","messages":[{"role":"user","parts":[{"type":"text","text":"summary"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"a","name":"x","arguments":"{}"}]}]}}`))
	f.Add([]byte(`{"cost":0.25}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := model.Rebuild([]json.RawMessage{data, data})
		// Whatever it accepts, every tool call is answered by the next message.
		for i, m := range msgs {
			if m.Role != llm.RoleAssistant || len(m.ToolCalls()) == 0 {
				continue
			}
			if i+1 >= len(msgs) || !msgs[i+1].HasToolResults() {
				t.Fatalf("unanswered calls at %d: %+v", i, msgs)
			}
		}
	})
}

// TestRebuildFromCompaction: a compaction record replaces the conversation
// before it; cost records are not messages.
func TestRebuildFromCompaction(t *testing.T) {
	text := func(role llm.Role, s string) llm.Message {
		return llm.Message{Role: role, Parts: []llm.Part{&llm.Text{Text: s}}}
	}
	recs := records(t, text(llm.RoleUser, "old prompt"), text(llm.RoleAssistant, "old answer"))
	comp, _ := json.Marshal(map[string]any{"compaction": map[string]any{"trigger": "auto",
		"messages": []llm.Message{text(llm.RoleUser, "summary"), text(llm.RoleAssistant, "kept")}}})
	recs = append(recs, comp, json.RawMessage(`{"cost":0.5}`))
	recs = append(recs, records(t, text(llm.RoleUser, "new prompt"))...)
	got := model.Rebuild(recs)
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text())
	}
	if strings.Join(texts, "|") != "summary|kept|new prompt" {
		t.Errorf("rebuilt %q", texts)
	}
}
