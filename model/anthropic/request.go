package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []block       `json:"system,omitempty"`
	Messages  []wireMessage `json:"messages"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Stream    bool          `json:"stream"`
	Thinking  *thinking     `json:"thinking,omitempty"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	// CacheControl marks a cache breakpoint (see cache.go).
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireMessage struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is every content block shape we send; omitempty keeps each to its
// own fields.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"` // a pointer: an empty thinking text must still be sent
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []block         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// CacheControl marks a cache breakpoint (see cache.go).
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// DefaultMaxTokens is used when neither the request nor the config sets a
// limit: the API requires one.
const DefaultMaxTokens = 8192

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *Provider) buildRequest(req *llm.Request) *wireRequest {
	w := &wireRequest{Model: req.Model, Stream: true, MaxTokens: req.MaxTokens}
	if req.System != "" {
		w.System = []block{{Type: "text", Text: req.System}}
	}
	if w.Model == "" {
		w.Model = p.cfg.Model
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = p.cfg.MaxTokens
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	if req.ThinkingBudget > 0 {
		w.Thinking = &thinking{Type: "enabled", BudgetTokens: req.ThinkingBudget}
		// The API insists that max_tokens exceeds the budget.
		if w.MaxTokens <= req.ThinkingBudget {
			w.MaxTokens = req.ThinkingBudget + DefaultMaxTokens
		}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = emptyObjectSchema
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	for _, m := range req.Messages {
		wm := convertMessage(m)
		if len(wm.Content) == 0 {
			continue // the API rejects empty messages
		}
		// Consecutive messages of one role are merged so roles alternate.
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == wm.Role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, wm.Content...)
			continue
		}
		w.Messages = append(w.Messages, wm)
	}
	if !p.cfg.NoCache {
		placeBreakpoints(w)
	}
	return w
}

func convertMessage(m llm.Message) wireMessage {
	if m.Role == llm.RoleAssistant {
		w := wireMessage{Role: "assistant"}
		for _, part := range m.Parts {
			switch v := part.(type) {
			case *llm.Reasoning:
				// Only our own blocks can be sent back: the API checks the
				// signature, and reasoning without one is not a block.
				switch {
				case v.Provider != providerName:
				case v.Redacted != "":
					w.Content = append(w.Content, block{Type: "redacted_thinking", Data: v.Redacted})
				case v.Signature != "":
					w.Content = append(w.Content, block{Type: "thinking", Thinking: &v.Text, Signature: v.Signature})
				}
			case *llm.Text:
				if v.Text != "" {
					w.Content = append(w.Content, block{Type: "text", Text: v.Text})
				}
			case *llm.ToolCall:
				w.Content = append(w.Content, block{Type: "tool_use", ID: v.ID, Name: v.Name, Input: toolInput(v.Arguments)})
			}
		}
		return w
	}
	w := wireMessage{Role: "user"}
	var rest []block
	for _, part := range m.Parts {
		switch v := part.(type) {
		case *llm.Text:
			if v.Text != "" {
				rest = append(rest, block{Type: "text", Text: v.Text})
			}
		case *llm.Image:
			rest = append(rest, imageBlock(v))
		case *llm.ToolResult:
			b := block{Type: "tool_result", ToolUseID: v.CallID, IsError: v.IsError}
			for _, c := range v.Content {
				switch cv := c.(type) {
				case *llm.Text:
					if cv.Text != "" {
						b.Content = append(b.Content, block{Type: "text", Text: cv.Text})
					}
				case *llm.Image:
					b.Content = append(b.Content, imageBlock(cv))
				}
			}
			// Tool results must open the user message.
			w.Content = append(w.Content, b)
		}
	}
	w.Content = append(w.Content, rest...)
	return w
}

// toolInput returns the call's arguments as the JSON object the API
// requires. Arguments the model produced that are not an object (invalid
// JSON the pipeline rejected) are sent back wrapped so the model can see
// what it wrote.
func toolInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": args})
	return wrapped
}

func imageBlock(img *llm.Image) block {
	return block{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MIMEType, Data: base64.StdEncoding.EncodeToString(img.Data)}}
}
