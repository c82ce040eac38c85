package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/model/llm"
)

// ExhaustedText answers a prompt for which no turn is left.
const ExhaustedText = "The script is exhausted: it has no turn left for this prompt."

const providerName = "script"

// Provider plays a Script. It is stateless and safe for concurrent use.
type Provider struct {
	script *Script
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider playing s.
func New(s *Script) *Provider { return &Provider{script: s} }

// cursor is where a request stands in the script.
type cursor struct {
	turn     int // -1: no turn fits (the script is exhausted)
	response int
}

// locate replays the prompts of the history to find which turn the
// current prompt took and how many of its responses were already given.
func (p *Provider) locate(msgs []llm.Message) cursor {
	used := make([]bool, len(p.script.Turns))
	pos := cursor{turn: -1}
	for _, m := range msgs {
		switch {
		case m.Role == llm.RoleAssistant:
			pos.response++
		case m.Role == llm.RoleUser && !m.HasToolResults():
			text, ok := promptText(m)
			if !ok {
				continue // only dshd's notes, such as a compaction summary
			}
			pos = cursor{turn: -1}
			for i := range p.script.Turns {
				if !used[i] && p.script.Turns[i].fits(text) {
					used[i] = true
					pos.turn = i
					break
				}
			}
		}
	}
	return pos
}

// Stream implements [llm.Provider]: it plays the response the request's
// history points at.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	if emit == nil {
		emit = func(llm.Event) {}
	}
	resp := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: llm.StopEndTurn, Model: providerName}
	pos := p.locate(req.Messages)
	if pos.turn < 0 {
		if pos.response == 0 {
			emit(llm.TextDelta{Text: ExhaustedText})
			resp.Message.Parts = []llm.Part{&llm.Text{Text: ExhaustedText}}
		}
		return resp, nil
	}
	turn := p.script.Turns[pos.turn]
	if pos.response >= len(turn.Responses) {
		// Out of responses after tool calls: the turn ends quietly.
		return resp, nil
	}
	r := turn.Responses[pos.response]
	if r.DelayMs > 0 {
		t := time.NewTimer(time.Duration(r.DelayMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			resp.StopReason = llm.StopCancelled
			return resp, fmt.Errorf("script: %w", ctx.Err())
		}
	}
	if len(r.Thought) > 0 {
		for _, s := range r.Thought {
			emit(llm.ReasoningDelta{Text: s})
		}
		resp.Message.Parts = append(resp.Message.Parts, &llm.Reasoning{Text: strings.Join(r.Thought, ""), Provider: providerName})
	}
	if len(r.Text) > 0 {
		for _, s := range r.Text {
			emit(llm.TextDelta{Text: s})
		}
		resp.Message.Parts = append(resp.Message.Parts, &llm.Text{Text: strings.Join(r.Text, "")})
	}
	for i, c := range r.ToolCalls {
		call := llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: "{}"}
		if call.ID == "" {
			call.ID = fmt.Sprintf("script_t%d_r%d_c%d", pos.turn, pos.response, i)
		}
		switch {
		case c.RawArguments != nil:
			call.Arguments = *c.RawArguments
		case c.Arguments != nil:
			var b bytes.Buffer
			if json.Compact(&b, c.Arguments) == nil {
				call.Arguments = b.String()
			} else {
				call.Arguments = string(c.Arguments)
			}
		}
		emit(llm.ToolCallStarted{Index: i, ID: call.ID, Name: call.Name})
		emit(llm.ToolCallDelta{Index: i, ID: call.ID, Delta: call.Arguments})
		emit(llm.ToolCallFinished{Index: i, Call: call})
		resp.Message.Parts = append(resp.Message.Parts, &call)
	}
	if r.Usage != nil {
		resp.Usage = llm.Usage{Input: r.Usage.Input, Output: r.Usage.Output}
	}
	switch {
	case len(r.ToolCalls) > 0:
		resp.StopReason = llm.StopToolUse
	case r.StopReason != "":
		resp.StopReason = llm.StopReason(r.StopReason)
	}
	return resp, nil
}

// promptText is the text of a prompt as the user wrote it: without the
// notes dshd adds in <system-reminder> text parts (the session mode, a
// compaction's summary). ok is false when the message holds nothing else.
func promptText(m llm.Message) (string, bool) {
	var sb strings.Builder
	ok := false
	for _, p := range m.Parts {
		t, isText := p.(*llm.Text)
		if isText && strings.HasPrefix(t.Text, "<system-reminder>") {
			continue
		}
		ok = true
		if isText {
			sb.WriteString(t.Text)
		}
	}
	return sb.String(), ok
}
