package anthropicmock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lifetime is how long a cache entry lives after its last use.
const Lifetime = 5 * time.Minute

// Lookback is how many blocks before a breakpoint (itself included) the
// server checks for a cached prefix.
const Lookback = 20

// MaxBreakpoints is the most cache_control marks a request may carry.
const MaxBreakpoints = 4

// Usage is what the server reported for one request.
type Usage struct {
	Input      int64 `json:"input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

// Prompt is the size of the request's prompt.
func (u Usage) Prompt() int64 { return u.Input + u.CacheWrite + u.CacheRead }

// Request is one request as the reply function sees it.
type Request struct {
	Model    string
	System   string // the system blocks' text, joined
	Tools    []string
	Messages []Message
	// Tokens is the prompt's size in the server's count.
	Tokens int
	// Breakpoints is how many cache_control marks it carried.
	Breakpoints int
	// Body is the request as sent.
	Body []byte
	// Context ends when the client gives up on the request.
	Context context.Context
}

// Message is one message of a request, its content blocks as JSON.
type Message struct {
	Role   string
	Blocks []json.RawMessage
}

// Text is the text of a message's text blocks and of the text inside its
// tool results, joined by newlines.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Blocks {
		var v struct {
			Type    string            `json:"type"`
			Text    string            `json:"text"`
			Content []json.RawMessage `json:"content"`
		}
		if json.Unmarshal(b, &v) != nil {
			continue
		}
		switch v.Type {
		case "text":
			parts = append(parts, v.Text)
		case "tool_result":
			parts = append(parts, Message{Blocks: v.Content}.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// Reply is what the server streams back.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Error, when set, is sent instead: HTTP Status (default 400) with
	// {"type":"error","error":{"type":ErrorType,"message":Error}}.
	Error     string
	ErrorType string
	Status    int
}

// ToolCall is one tool_use block of a reply.
type ToolCall struct {
	ID, Name string
	Input    any
}

// Server is the mock API.
type Server struct {
	*httptest.Server
	// Window, when positive, is the largest prompt accepted.
	Window int
	// MinTokens is the smallest prefix cached (default 1024).
	MinTokens int

	reply func(*Request) Reply

	mu     sync.Mutex
	now    time.Time
	cache  map[[32]byte]time.Time // prefix hash → expiry
	usages []Usage
	reqs   []*Request
}

// New starts a server answering with reply; it stops when the test ends.
func New(t testing.TB, reply func(*Request) Reply) *Server {
	s := &Server{reply: reply, MinTokens: 1024, cache: map[[32]byte]time.Time{}, now: time.Unix(1_700_000_000, 0)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Advance moves the server's clock forward.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

// Usages returns the usage of every request answered so far.
func (s *Server) Usages() []Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Usage(nil), s.usages...)
}

// Requests returns every request received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// block is one cacheable unit of a request.
type block struct {
	canonical []byte // its JSON without cache_control
	tokens    int
	mark      bool
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var raw struct {
		Model    string            `json:"model"`
		System   json.RawMessage   `json:"system"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &raw) != nil {
		writeError(w, 400, "invalid_request_error", "malformed request")
		return
	}
	req := &Request{Model: raw.Model, Body: body, Context: r.Context()}
	var blocks []block
	add := func(prefix string, b json.RawMessage) {
		c, mark := canonical(b)
		c = append([]byte(prefix), c...)
		blocks = append(blocks, block{canonical: c, tokens: (len(c) + 3) / 4, mark: mark})
	}
	for _, t := range raw.Tools {
		add("tool:", t)
		var v struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &v)
		req.Tools = append(req.Tools, v.Name)
	}
	var sys []string
	for _, b := range asBlocks(raw.System) {
		add("system:", b)
		var v struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(b, &v)
		sys = append(sys, v.Text)
	}
	req.System = strings.Join(sys, "\n")
	for _, m := range raw.Messages {
		msg := Message{Role: m.Role, Blocks: asBlocks(m.Content)}
		for i, b := range msg.Blocks {
			prefix := ""
			if i == 0 {
				prefix = m.Role + ":"
			}
			add(prefix, b)
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, b := range blocks {
		req.Tokens += b.tokens
		if b.mark {
			req.Breakpoints++
		}
	}

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if req.Breakpoints > MaxBreakpoints {
		writeError(w, 400, "invalid_request_error", fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", MaxBreakpoints, req.Breakpoints))
		return
	}
	if s.Window > 0 && req.Tokens > s.Window {
		writeError(w, 400, "invalid_request_error", fmt.Sprintf("prompt is too long: %d tokens > %d maximum", req.Tokens, s.Window))
		return
	}
	reply := s.reply(req)
	if reply.Error != "" {
		st := reply.Status
		if st == 0 {
			st = 400
		}
		typ := reply.ErrorType
		if typ == "" {
			typ = "invalid_request_error"
		}
		writeError(w, st, typ, reply.Error)
		return
	}
	u := s.account(blocks)
	u.Output = int64(max(1, (len(reply.Text)+3)/4))
	for _, c := range reply.ToolCalls {
		in, _ := json.Marshal(c.Input)
		u.Output += int64((len(in) + len(c.Name) + 3) / 4)
	}
	s.mu.Lock()
	s.usages = append(s.usages, u)
	s.mu.Unlock()
	stream(w, req.Model, u, reply)
}

// account emulates the cache for one request's blocks.
func (s *Server) account(blocks []block) Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	hashes := make([][32]byte, len(blocks))
	cum := make([]int, len(blocks))
	var h [32]byte
	total := 0
	for i, b := range blocks {
		h = sha256.Sum256(append(h[:], b.canonical...))
		hashes[i] = h
		total += b.tokens
		cum[i] = total
	}
	live := func(i int) bool {
		exp, ok := s.cache[hashes[i]]
		return ok && s.now.Before(exp)
	}
	hit := -1 // the last block of the longest cached prefix found
	for i, b := range blocks {
		if !b.mark {
			continue
		}
		for j := i; j >= 0 && j > i-Lookback; j-- {
			if j > hit && live(j) {
				hit = j
				break
			}
		}
	}
	var u Usage
	if hit >= 0 {
		u.CacheRead = int64(cum[hit])
		s.cache[hashes[hit]] = s.now.Add(Lifetime)
	}
	written := hit
	for i, b := range blocks {
		if b.mark && i > hit && cum[i] >= s.MinTokens {
			s.cache[hashes[i]] = s.now.Add(Lifetime)
			written = i
		}
	}
	if written > hit {
		base := 0
		if hit >= 0 {
			base = cum[hit]
		}
		u.CacheWrite = int64(cum[written] - base)
	}
	u.Input = int64(total) - u.CacheRead - u.CacheWrite
	return u
}

// canonical is b without its cache_control, re-encoded with sorted keys,
// and whether it carried one.
func canonical(b json.RawMessage) ([]byte, bool) {
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return b, false
	}
	_, mark := v["cache_control"]
	delete(v, "cache_control")
	c, _ := json.Marshal(v)
	return c, mark
}

// asBlocks reads content that is a string or an array of blocks.
func asBlocks(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
		return []json.RawMessage{b}
	}
	var blocks []json.RawMessage
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}

func stream(w http.ResponseWriter, model string, u Usage, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(typ string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"usage": map[string]int64{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}})
	i := 0
	if r.Text != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]string{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "text_delta", "text": r.Text}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for _, c := range r.ToolCalls {
		in, _ := json.Marshal(c.Input)
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]string{"type": "input_json_delta", "partial_json": string(in)}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]string{"stop_reason": stop}, "usage": map[string]int64{"output_tokens": u.Output}})
	ev("message_stop", map[string]string{"type": "message_stop"})
}
