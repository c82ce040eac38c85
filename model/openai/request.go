package openai

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

type wireRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Tools               []wireTool     `json:"tools,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, an array of content parts, or null.
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Function     wireCallFunction `json:"function"`
	ExtraContent json.RawMessage  `json:"extra_content,omitempty"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *Provider) buildRequest(req *llm.Request) *wireRequest {
	w := &wireRequest{Model: req.Model, Stream: true}
	if w.Model == "" {
		w.Model = p.cfg.Model
	}
	if !p.cfg.NoStreamUsage {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	if p.cfg.MaxCompletionTokens {
		w.MaxCompletionTokens = maxTokens
	} else {
		w.MaxTokens = maxTokens
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, p.convertMessage(m)...)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = emptyObjectSchema
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return w
}

// convertMessage maps one neutral message to Chat Completions messages:
// tool results become "tool" messages (images in them follow in a user
// message, since tool messages carry text only), the rest stays one
// message.
func (p *Provider) convertMessage(m llm.Message) []wireMessage {
	if m.Role == llm.RoleAssistant {
		out := wireMessage{Role: "assistant"}
		var text, reasoning strings.Builder
		for _, part := range m.Parts {
			switch v := part.(type) {
			case *llm.Text:
				text.WriteString(v.Text)
			case *llm.Reasoning:
				reasoning.WriteString(v.Text)
			case *llm.ToolCall:
				tc := wireToolCall{ID: v.ID, Type: "function",
					Function: wireCallFunction{Name: v.Name, Arguments: sendableArguments(v.Arguments)}}
				if v.Extra != "" && json.Valid([]byte(v.Extra)) {
					tc.ExtraContent = json.RawMessage(v.Extra)
				}
				out.ToolCalls = append(out.ToolCalls, tc)
			}
		}
		if text.Len() > 0 || len(out.ToolCalls) == 0 {
			out.Content = text.String()
		}
		if p.cfg.SendReasoning {
			out.ReasoningContent = reasoning.String()
		}
		return []wireMessage{out}
	}
	var out []wireMessage
	var user []contentPart
	textOnly := true
	for _, part := range m.Parts {
		switch v := part.(type) {
		case *llm.Text:
			user = append(user, contentPart{Type: "text", Text: v.Text})
		case *llm.Image:
			user = append(user, imagePart(v))
			textOnly = false
		case *llm.ToolResult:
			var text strings.Builder
			for _, c := range v.Content {
				switch cv := c.(type) {
				case *llm.Text:
					text.WriteString(cv.Text)
				case *llm.Image:
					user = append(user, contentPart{Type: "text", Text: "Image from the result of tool call " + v.CallID + ":"}, imagePart(cv))
					textOnly = false
				}
			}
			content := text.String()
			if v.IsError && content == "" {
				content = "error"
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: v.CallID, Content: content})
		}
	}
	if len(user) > 0 {
		if textOnly {
			// A plain string is what every server understands.
			var s strings.Builder
			for i, c := range user {
				if i > 0 {
					s.WriteString("\n\n")
				}
				s.WriteString(c.Text)
			}
			out = append(out, wireMessage{Role: "user", Content: s.String()})
		} else {
			out = append(out, wireMessage{Role: "user", Content: user})
		}
	}
	return out
}

func imagePart(img *llm.Image) contentPart {
	return contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}}
}

// sendableArguments returns args if they are a JSON object. Otherwise (the
// model wrote invalid JSON, which the pipeline rejected) they are wrapped
// in one, because several servers (llama.cpp, vLLM chat templates) parse
// the arguments of earlier calls and fail the whole request on bad JSON;
// the wrapper still shows the model what it wrote.
func sendableArguments(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return args
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": args})
	return string(wrapped)
}
