package model

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dsh-tools/dshd/model/llm"
)

// TestMessageRecordIsTheRecordsEncoding: the history record built from a
// message's bytes is the bytes encoding/json makes of the record, so logs
// written before and after read and compare alike.
func TestMessageRecordIsTheRecordsEncoding(t *testing.T) {
	cost := func(f float64) *float64 { return &f }
	msgs := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "a <b> & \"c\"\n\u2028"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{&llm.Text{Text: "Looking."}, &llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"path": "main.go"}`}}},
		{Role: llm.RoleUser, Parts: []llm.Part{&llm.ToolResult{CallID: "c1", Name: "read", Content: []llm.Part{&llm.Text{Text: "package main\n"}}, IsError: true}}},
		{Role: llm.RoleAssistant},
	}
	for _, m := range msgs {
		for _, c := range []*float64{nil, cost(0), cost(0.0123), cost(1e-9), cost(12345678.5)} {
			want, err := json.Marshal(record{Message: &m, Cost: c})
			if err != nil {
				t.Fatal(err)
			}
			msg, err := json.Marshal(&m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := messageRecord(msg, c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("record\n got %s\nwant %s", got, want)
			}
			if tokensOf(msg) != estimateTokens(m) {
				t.Errorf("the estimate of the bytes, %d, is not the message's, %d", tokensOf(msg), estimateTokens(m))
			}
		}
	}
}
