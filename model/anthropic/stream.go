package anthropic

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Model string    `json:"model"`
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	Index        int             `json:"index"`
	ContentBlock *startBlock     `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
	Error        *wireError      `json:"error"`
}

type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type startBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type blockDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type blockAcc struct {
	kind      string
	text      strings.Builder
	signature string
	data      string
	id, name  string
	input     json.RawMessage
	callPos   int
	stopped   bool
}

type streamState struct {
	emit       func(llm.Event)
	emitted    bool
	model      string
	blocks     map[int]*blockAcc
	calls      int
	usage      llm.Usage
	stopReason string
	stopped    bool
}

func newStreamState(emit func(llm.Event)) *streamState {
	return &streamState{emit: emit, blocks: map[int]*blockAcc{}}
}

func (s *streamState) send(e llm.Event) {
	s.emitted = true
	if s.emit != nil {
		s.emit(e)
	}
}

// handle processes one event; done reports message_stop.
func (s *streamState) handle(eventType string, data []byte) (done bool, err error) {
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, fmt.Errorf("anthropic: decoding %s event: %w", eventType, err)
	}
	if ev.Type == "" {
		ev.Type = eventType
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.model = ev.Message.Model
			s.setUsage(ev.Message.Usage)
		}
	case "content_block_start":
		if ev.ContentBlock == nil {
			return false, fmt.Errorf("anthropic: content_block_start without a block")
		}
		s.startBlock(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		var d blockDelta
		if err := json.Unmarshal(ev.Delta, &d); err != nil {
			return false, fmt.Errorf("anthropic: decoding delta: %w", err)
		}
		s.delta(ev.Index, d)
	case "content_block_stop":
		s.stopBlock(ev.Index)
	case "message_delta":
		var d blockDelta
		_ = json.Unmarshal(ev.Delta, &d)
		if d.StopReason != "" {
			s.stopReason = d.StopReason
			s.stopped = true
		}
		if ev.Usage != nil {
			s.setUsage(*ev.Usage)
		}
	case "message_stop":
		s.stopped = true
		return true, nil
	case "error":
		e := wireError{}
		if ev.Error != nil {
			e = *ev.Error
		}
		return false, &llm.APIError{Provider: providerName, Type: e.Type, Message: e.Message, Retryable: retryableType(e.Type)}
	}
	// ping and unknown events are ignored, as the API asks.
	return false, nil
}

// setUsage takes the non-zero counts: message_start carries the input,
// message_delta the cumulative output (and sometimes updated input).
func (s *streamState) setUsage(u wireUsage) {
	if u.InputTokens != 0 {
		s.usage.Input = u.InputTokens
	}
	if u.OutputTokens != 0 {
		s.usage.Output = u.OutputTokens
	}
	if u.CacheReadInputTokens != 0 {
		s.usage.CacheRead = u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != 0 {
		s.usage.CacheWrite = u.CacheCreationInputTokens
	}
}

func (s *streamState) startBlock(i int, b *startBlock) {
	if s.blocks[i] != nil {
		// A second start for an index (never sent by the API): the first
		// block stays, so what was emitted for it still matches the
		// response.
		return
	}
	acc := &blockAcc{kind: b.Type, signature: b.Signature, data: b.Data, id: b.ID, name: b.Name, input: b.Input}
	s.blocks[i] = acc
	switch b.Type {
	case "text":
		if b.Text != "" {
			acc.text.WriteString(b.Text)
			s.send(llm.TextDelta{Text: b.Text})
		}
	case "thinking":
		if b.Thinking != "" {
			acc.text.WriteString(b.Thinking)
			s.send(llm.ReasoningDelta{Text: b.Thinking})
		}
	case "tool_use":
		acc.callPos = s.calls
		s.calls++
		if acc.id == "" {
			acc.id = fmt.Sprintf("toolu_dshd_%d", acc.callPos)
		}
		s.send(llm.ToolCallStarted{Index: acc.callPos, ID: acc.id, Name: acc.name})
	}
}

func (s *streamState) delta(i int, d blockDelta) {
	kind := deltaBlockKind[d.Type]
	if kind == "" {
		return // citations and other deltas carry nothing kept
	}
	acc := s.blocks[i]
	if acc == nil {
		// A delta for a block never started: treat it as one begun here.
		s.startBlock(i, &startBlock{Type: kind})
		acc = s.blocks[i]
	}
	if acc.stopped || acc.kind != kind {
		// A delta after the block's stop, or of another kind's (such as
		// input_json_delta for a server_tool_use block): what was emitted
		// and finished stays what the response holds.
		return
	}
	switch d.Type {
	case "text_delta":
		acc.text.WriteString(d.Text)
		if d.Text != "" {
			s.send(llm.TextDelta{Text: d.Text})
		}
	case "thinking_delta":
		acc.text.WriteString(d.Thinking)
		if d.Thinking != "" {
			s.send(llm.ReasoningDelta{Text: d.Thinking})
		}
	case "signature_delta":
		acc.signature += d.Signature
	case "input_json_delta":
		acc.text.WriteString(d.PartialJSON)
		if d.PartialJSON != "" {
			s.send(llm.ToolCallDelta{Index: acc.callPos, ID: acc.id, Delta: d.PartialJSON})
		}
	}
}

// deltaBlockKind is the kind of block each kept delta type belongs to.
var deltaBlockKind = map[string]string{
	"text_delta":       "text",
	"thinking_delta":   "thinking",
	"signature_delta":  "thinking",
	"input_json_delta": "tool_use",
}

func (s *streamState) stopBlock(i int) {
	acc := s.blocks[i]
	if acc == nil || acc.stopped {
		return
	}
	acc.stopped = true
	if acc.kind == "tool_use" {
		s.send(llm.ToolCallFinished{Index: acc.callPos, Call: acc.call()})
	}
}

func (b *blockAcc) call() llm.ToolCall {
	args := b.text.String()
	if strings.TrimSpace(args) == "" {
		args = "{}"
		if len(b.input) > 0 && string(b.input) != "null" {
			args = string(b.input)
		}
	}
	return llm.ToolCall{ID: b.id, Name: b.name, Arguments: args}
}

// response assembles the blocks in index order. Tool calls whose block
// never stopped are incomplete and left out.
// Emitted reports whether the attempt emitted anything (see [httpx.State]).
func (s *streamState) Emitted() bool { return s.emitted }

// Response is the attempt's response so far (see [httpx.State]).
func (s *streamState) Response() *llm.Response {
	r := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Usage: s.usage, Model: s.model}
	idx := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	hasCalls := false
	for _, i := range idx {
		b := s.blocks[i]
		switch b.kind {
		case "text":
			if b.text.Len() > 0 {
				r.Message.Parts = append(r.Message.Parts, &llm.Text{Text: b.text.String()})
			}
		case "thinking":
			part := &llm.Reasoning{Text: b.text.String(), Provider: providerName}
			if b.stopped {
				// A block cut short may carry a partial signature, which
				// the API would reject when it is sent back.
				part.Signature = b.signature
			}
			r.Message.Parts = append(r.Message.Parts, part)
		case "redacted_thinking":
			r.Message.Parts = append(r.Message.Parts, &llm.Reasoning{Redacted: b.data, Provider: providerName})
		case "tool_use":
			if b.stopped {
				c := b.call()
				r.Message.Parts = append(r.Message.Parts, &c)
				hasCalls = true
			}
		}
	}
	switch s.stopReason {
	case "max_tokens", "model_context_window_exceeded":
		r.StopReason = llm.StopMaxTokens
	case "refusal":
		r.StopReason = llm.StopRefusal
	case "tool_use":
		r.StopReason = llm.StopToolUse
	default:
		// end_turn, stop_sequence, pause_turn and unknown reasons.
		r.StopReason = llm.StopEndTurn
		if hasCalls && s.stopped {
			r.StopReason = llm.StopToolUse
		}
	}
	return r
}
