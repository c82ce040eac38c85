package model_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/llm"
)

// benchHistory is a session of 50 exchanges, each a prompt, a tool call,
// its result and an answer.
func benchHistory(b *testing.B) []json.RawMessage {
	var msgs []llm.Message
	for i := range 50 {
		msgs = append(msgs,
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: fmt.Sprintf("prompt %d: please look at the file", i)}}},
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "Looking."}, &llm.ToolCall{ID: fmt.Sprint("c", i), Name: "read", Arguments: `{"path":"main.go"}`}}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{&llm.ToolResult{CallID: fmt.Sprint("c", i), Name: "read", Content: []llm.Part{&llm.Text{Text: "package main\n\nfunc main() {}\n"}}}}},
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "It is an empty program."}}})
	}
	return records(b, msgs...)
}

// BenchmarkRebuild rebuilds a 200-message history from its records, as
// every turn does.
func BenchmarkRebuild(b *testing.B) {
	recs := benchHistory(b)
	b.ReportAllocs()
	for b.Loop() {
		if got := model.Rebuild(recs); len(got) != 200 {
			b.Fatal(len(got))
		}
	}
}

// BenchmarkRebuildJSONReference decodes the same records into generic
// maps with encoding/json: the floor Rebuild's cost is read against.
func BenchmarkRebuildJSONReference(b *testing.B) {
	recs := benchHistory(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			var v map[string]any
			if err := json.Unmarshal(r, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}
