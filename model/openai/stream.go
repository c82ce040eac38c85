package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type delta struct {
	Content          *string     `json:"content"`
	ReasoningContent *string     `json:"reasoning_content"`
	Reasoning        *string     `json:"reasoning"`
	Refusal          *string     `json:"refusal"`
	ToolCalls        []toolDelta `json:"tool_calls"`
}

type toolDelta struct {
	Index *int   `json:"index"`
	ID    string `json:"id"`
	// ExtraContent is provider data to send back with the call (Gemini
	// puts its thought signature here).
	ExtraContent json.RawMessage `json:"extra_content"`
	Function     struct {
		Name string `json:"name"`
		// Arguments is a JSON string per the API; a few servers send the
		// arguments object itself, which is kept as its JSON text.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type callAcc struct {
	pos       int
	id, name  string
	extra     string
	generated bool
	args      strings.Builder
	started   bool
}

// streamState accumulates one attempt's response.
type streamState struct {
	emit         func(llm.Event)
	emitted      bool
	model        string
	text         strings.Builder
	thinking     strings.Builder
	refusal      bool
	calls        []*callAcc
	byIndex      map[int]*callAcc
	finishReason string
	finished     bool
	usage        llm.Usage
	done         bool
}

func newStreamState(emit func(llm.Event)) *streamState {
	return &streamState{emit: emit, byIndex: map[int]*callAcc{}}
}

func (s *streamState) send(e llm.Event) {
	s.emitted = true
	if s.emit != nil {
		s.emit(e)
	}
}

func (s *streamState) handle(eventType string, data []byte) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("openai: decoding stream chunk: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" || eventType == "error" {
		return s.streamError(c.Error, data)
	}
	return s.apply(c)
}

func (s *streamState) apply(c chunk) error {
	if c.Model != "" {
		s.model = c.Model
	}
	if c.Usage != nil {
		s.usage = llm.Usage{Input: c.Usage.PromptTokens, Output: c.Usage.CompletionTokens}
		if d := c.Usage.PromptTokensDetails; d != nil && d.CachedTokens <= s.usage.Input {
			s.usage.CacheRead = d.CachedTokens
			s.usage.Input -= d.CachedTokens
		}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice; ignore strays
		}
		d := ch.Delta
		// Servers send reasoning as reasoning_content (DeepSeek, vLLM,
		// llama.cpp) or reasoning (OpenRouter, Ollama); some send both with
		// the same text, so take one.
		if r := firstNonEmpty(d.ReasoningContent, d.Reasoning); r != "" {
			s.thinking.WriteString(r)
			s.send(llm.ReasoningDelta{Text: r})
		}
		if d.Content != nil && *d.Content != "" {
			s.text.WriteString(*d.Content)
			s.send(llm.TextDelta{Text: *d.Content})
		}
		if d.Refusal != nil && *d.Refusal != "" {
			s.refusal = true
			s.text.WriteString(*d.Refusal)
			s.send(llm.TextDelta{Text: *d.Refusal})
		}
		for _, td := range d.ToolCalls {
			s.toolDelta(td)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finishReason = *ch.FinishReason
			s.finished = true
		}
	}
	return nil
}

func firstNonEmpty(ps ...*string) string {
	for _, p := range ps {
		if p != nil && *p != "" {
			return *p
		}
	}
	return ""
}

func (s *streamState) streamError(raw json.RawMessage, data []byte) error {
	var e wireError
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			e.Message = str
		} else if t, m := parseError(data); m != "" {
			e.Type, e.Message = t, m
		} else {
			e.Message = string(data)
		}
	}
	return &llm.APIError{Provider: providerName, Type: errorType(e), Message: e.Message, Retryable: streamErrorRetryable(e)}
}

func (s *streamState) toolDelta(td toolDelta) {
	var c *callAcc
	switch {
	case td.Index != nil:
		c = s.byIndex[*td.Index]
		// Some servers put every call at index 0 and tell them apart by id
		// only.
		if c != nil && td.ID != "" && c.id != "" && td.ID != c.id && !c.generated {
			c = nil
		}
	case td.ID != "":
		for _, k := range s.calls {
			if k.id == td.ID {
				c = k
			}
		}
	default:
		// Neither index nor id: a continuation of the latest call.
		if n := len(s.calls); n > 0 {
			c = s.calls[n-1]
		}
	}
	if c == nil {
		c = &callAcc{pos: len(s.calls)}
		s.calls = append(s.calls, c)
	}
	if td.Index != nil {
		s.byIndex[*td.Index] = c
	}
	if td.ID != "" && c.id == "" {
		c.id = td.ID
	}
	if td.Function.Name != "" && c.name == "" {
		// Some servers repeat the name in every delta: keep the first.
		c.name = td.Function.Name
	}
	if len(td.ExtraContent) > 0 && string(td.ExtraContent) != "null" {
		c.extra = string(td.ExtraContent)
	}
	args := argumentText(td.Function.Arguments)
	c.args.WriteString(args)
	switch {
	case !c.started && c.name != "":
		s.start(c)
	case c.started && args != "":
		s.send(llm.ToolCallDelta{Index: c.pos, ID: c.id, Delta: args})
	}
}

func argumentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (s *streamState) start(c *callAcc) {
	if c.id == "" {
		c.id = "call_" + strconv.Itoa(c.pos) + "_" + randomID()
		c.generated = true
	}
	c.started = true
	s.send(llm.ToolCallStarted{Index: c.pos, ID: c.id, Name: c.name})
	// Arguments that came before the name (or, from finish, for a call
	// that never got one) are sent now, so a call's deltas always add up
	// to its arguments.
	if c.args.Len() > 0 {
		s.send(llm.ToolCallDelta{Index: c.pos, ID: c.id, Delta: c.args.String()})
	}
}

// finish completes the tool calls once the stream ended properly.
func (s *streamState) finish() error {
	for _, c := range s.calls {
		if !c.started {
			s.start(c)
		}
		s.send(llm.ToolCallFinished{Index: c.pos, Call: s.call(c)})
	}
	s.done = true
	return nil
}

func (s *streamState) call(c *callAcc) llm.ToolCall {
	args := c.args.String()
	if strings.TrimSpace(args) == "" {
		// Servers send "" for a call without arguments.
		args = "{}"
	}
	return llm.ToolCall{ID: c.id, Name: c.name, Arguments: args, Extra: c.extra}
}

// response builds the message from what was accumulated; tool calls are
// included only once the stream completed.
// Emitted reports whether the attempt emitted anything (see [httpx.State]).
func (s *streamState) Emitted() bool { return s.emitted }

// Response is the attempt's response so far (see [httpx.State]).
func (s *streamState) Response() *llm.Response {
	r := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Usage: s.usage, Model: s.model}
	if s.thinking.Len() > 0 {
		r.Message.Parts = append(r.Message.Parts, &llm.Reasoning{Text: s.thinking.String(), Provider: providerName})
	}
	if s.text.Len() > 0 {
		r.Message.Parts = append(r.Message.Parts, &llm.Text{Text: s.text.String()})
	}
	if s.done {
		for _, c := range s.calls {
			call := s.call(c)
			r.Message.Parts = append(r.Message.Parts, &call)
		}
	}
	r.StopReason = s.stopReason()
	return r
}

func (s *streamState) stopReason() llm.StopReason {
	switch {
	case s.finishReason == "length":
		return llm.StopMaxTokens
	case s.finishReason == "content_filter" || s.refusal:
		return llm.StopRefusal
	case s.done && len(s.calls) > 0:
		// Some servers say "stop" even when the response has tool calls.
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// whole handles a non-streamed completion, which some servers send despite
// "stream": true: its message is replayed as one delta.
func (s *streamState) whole(body io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(body, 256<<20))
	if err != nil {
		return fmt.Errorf("openai: reading response: %w", err)
	}
	var v struct {
		Choices []struct {
			Index        int     `json:"index"`
			Message      delta   `json:"message"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("openai: decoding response: %w", err)
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("openai: decoding response: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return s.streamError(c.Error, data)
	}
	for i := range c.Choices {
		if i < len(v.Choices) {
			c.Choices[i].Delta = v.Choices[i].Message
			// Whole calls carry no index; their position is their index.
			for k := range c.Choices[i].Delta.ToolCalls {
				c.Choices[i].Delta.ToolCalls[k].Index = &k
			}
		}
	}
	if err := s.apply(c); err != nil {
		return err
	}
	if !s.finished {
		return fmt.Errorf("openai: %w (response without finish_reason)", llm.ErrTruncated)
	}
	return s.finish()
}
