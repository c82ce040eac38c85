package model

import (
	"encoding/json"

	"github.com/dsh-tools/dshd/model/llm"
)

// record is one entry of the loop's history in the durable session log
// (see [bridge.Turn.Remember]): a message, a cost, or a compaction;
// older daemons skip the kinds they do not know.
type record struct {
	Message *llm.Message `json:"message,omitempty"`
	// Cost is the price in US dollars of the response the record holds
	// (or, alone, of a request with no message of its own).
	Cost *float64 `json:"cost,omitempty"`
	// Compaction replaces the conversation so far (see compact.go).
	Compaction *compactionRecord `json:"compaction,omitempty"`
}

// messageRecord is the history record of a message encoded as msg, with
// the cost of the response it was: json.Marshal(record{Message: m, Cost:
// cost}), without encoding the message again.
func messageRecord(msg []byte, cost *float64) ([]byte, error) {
	rec := make([]byte, 0, len(msg)+40)
	rec = append(rec, `{"message":`...)
	rec = append(rec, msg...)
	if cost != nil {
		c, err := json.Marshal(*cost)
		if err != nil {
			return nil, err
		}
		rec = append(append(rec, `,"cost":`...), c...)
	}
	return append(rec, '}'), nil
}

// interruptedResult answers a tool call whose result never reached the
// history (the daemon died or the turn failed mid-call).
const interruptedResult = "The call was interrupted before it completed; its outcome is unknown."

// Rebuild turns the records a Loop stored with Remember back into the
// conversation the model saw last: a compaction record replaces every
// message before it. Records it cannot read are skipped. It repairs what an
// interrupted turn can leave behind, because providers reject it: an
// assistant message whose tool calls have no results gets isError results
// saying the calls were interrupted.
func Rebuild(records []json.RawMessage) []llm.Message {
	var msgs []llm.Message
	for _, raw := range records {
		var rec record
		if err := json.Unmarshal(raw, &rec); err != nil {
			continue
		}
		switch {
		case rec.Compaction != nil:
			msgs = append([]llm.Message(nil), rec.Compaction.Messages...)
		case rec.Message != nil:
			msgs = append(msgs, *rec.Message)
		}
	}
	return repair(msgs)
}

// repair inserts results for tool calls that have none.
func repair(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for i, m := range msgs {
		out = append(out, m)
		if m.Role != llm.RoleAssistant {
			continue
		}
		calls := m.ToolCalls()
		if len(calls) == 0 {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(msgs) && msgs[i+1].Role == llm.RoleUser {
			for _, p := range msgs[i+1].Parts {
				if r, ok := p.(*llm.ToolResult); ok {
					answered[r.CallID] = true
				}
			}
		}
		var missing []llm.Part
		for _, c := range calls {
			if !answered[c.ID] {
				missing = append(missing, &llm.ToolResult{CallID: c.ID, Name: c.Name, IsError: true,
					Content: []llm.Part{&llm.Text{Text: interruptedResult}}})
			}
		}
		if len(missing) == 0 {
			continue
		}
		if len(answered) > 0 {
			// Complete the existing results message.
			next := msgs[i+1]
			next.Parts = append(append([]llm.Part(nil), next.Parts...), missing...)
			msgs[i+1] = next
			continue
		}
		out = append(out, llm.Message{Role: llm.RoleUser, Parts: missing})
	}
	return out
}
