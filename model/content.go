package model

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// PromptMessage turns the content blocks of a prompt into the user message
// the model reads: text as is; a resource_link as a note naming the file
// (and the selected lines of a `file:///abs#L10:20` link); an embedded text
// resource as fenced file content with its path; an image as an image when
// images is true and as a note otherwise; anything else as a note.
func PromptMessage(blocks []acp.ContentBlock, images bool) llm.Message {
	return PromptMessageRead(blocks, images, nil)
}

// PromptMessageRead is [PromptMessage] with the resource links read: read
// (usually [bridge.Turn.ReadMention]) returns what a link names, and the
// model gets the file's text (the selected lines of a selection or
// symbol), a directory's listing or an image (when images is true); a link
// that could not be read is said to the model with the reason, never
// dropped. A nil read leaves links as notes.
func PromptMessageRead(blocks []acp.ContentBlock, images bool, read func(uri string) bridge.Mention) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, b := range blocks {
		if link, ok := b.Value.(*acp.ResourceLink); ok && read != nil {
			m.Parts = append(m.Parts, mentionPart(link, read(link.URI), images))
			continue
		}
		m.Parts = append(m.Parts, promptPart(b, images))
	}
	if len(m.Parts) == 0 {
		m.Parts = []llm.Part{&llm.Text{Text: ""}}
	}
	return m
}

func promptPart(b acp.ContentBlock, images bool) llm.Part {
	switch v := b.Value.(type) {
	case *acp.TextContent:
		return &llm.Text{Text: v.Text}
	case *acp.ResourceLink:
		where := describeURI(v.URI)
		if v.Name != "" && !strings.HasSuffix(where, v.Name) {
			where += " (" + v.Name + ")"
		}
		return &llm.Text{Text: fmt.Sprintf("[The user referenced %s. Read it with your tools if you need its content.]", where)}
	case *acp.EmbeddedResource:
		switch r := v.Resource.Value.(type) {
		case *acp.TextResourceContents:
			return &llm.Text{Text: fencedFile(r.URI, r.Text)}
		case *acp.BlobResourceContents:
			mime := deref(r.MIMEType)
			if images && strings.HasPrefix(mime, "image/") {
				if data, err := base64.StdEncoding.DecodeString(r.Blob); err == nil {
					return &llm.Image{MIMEType: mime, Data: data}
				}
			}
			return &llm.Text{Text: fmt.Sprintf("[The user attached %s (%s), which is binary and not shown.]", describeURI(r.URI), orUnknown(mime))}
		}
	case *acp.ImageContent:
		if images {
			if data, err := base64.StdEncoding.DecodeString(v.Data); err == nil {
				return &llm.Image{MIMEType: v.MIMEType, Data: data}
			}
		}
		return &llm.Text{Text: "[The user attached an image, which this model cannot see.]"}
	case *acp.AudioContent:
		return &llm.Text{Text: "[The user attached audio, which this model cannot hear.]"}
	}
	return &llm.Text{Text: "[The user attached content of a kind dshd does not understand.]"}
}

// mentionPart shows a mention that was read.
func mentionPart(link *acp.ResourceLink, m bridge.Mention, images bool) llm.Part {
	where := describeURI(link.URI)
	if link.Name != "" && !strings.Contains(where, link.Name) {
		where += " (" + link.Name + ")"
	}
	switch {
	case m.Err != nil:
		return &llm.Text{Text: fmt.Sprintf("[The user referenced %s, which dshd could not read: %v.]", where, m.Err)}
	case m.Dir:
		var sb strings.Builder
		fmt.Fprintf(&sb, "The user referenced the directory %s. Its entries:\n", where)
		for _, e := range m.Entries {
			sb.WriteString(e)
			sb.WriteByte('\n')
		}
		if len(m.Entries) == 0 {
			sb.WriteString("(empty)\n")
		}
		if m.More > 0 {
			fmt.Fprintf(&sb, "[… and %d more entries not listed.]\n", m.More)
		}
		return &llm.Text{Text: strings.TrimRight(sb.String(), "\n")}
	case m.Image != nil:
		if images {
			return &llm.Image{MIMEType: m.MIMEType, Data: m.Image}
		}
		return &llm.Text{Text: fmt.Sprintf("[The user referenced the image %s, which this model cannot see.]", where)}
	}
	text := fencedFile(link.URI, m.Text)
	if link.Name != "" && m.From > 0 && !strings.Contains(where, link.Name) {
		text = fmt.Sprintf("The user referenced %s:\n%s", link.Name, text)
	}
	if m.Truncated {
		text += fmt.Sprintf("\n[Only the first %d of %d bytes are shown; read the file with your tools for the rest.]", len(m.Text), m.Size)
	}
	return &llm.Text{Text: text}
}

// describeURI names a resource for the model: the path of a file URI with
// its selected lines, or the URI itself.
func describeURI(uri string) string {
	path, from, to := splitFileURI(uri)
	if path == "" {
		return "`" + uri + "`"
	}
	switch {
	case from > 0 && to > from:
		return fmt.Sprintf("`%s` (lines %d-%d)", path, from, to)
	case from > 0:
		return fmt.Sprintf("`%s` (line %d)", path, from)
	}
	return "`" + path + "`"
}

// splitFileURI returns the path and selected lines of a file:// URI; path
// is empty for other URIs.
func splitFileURI(uri string) (path string, from, to int) {
	path, from, to, _ = bridge.ParseFileURI(uri)
	return path, from, to
}

// fencedFile shows an embedded file to the model, fenced so that its
// content cannot be mistaken for the user's words.
func fencedFile(uri, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Contents of %s:\n%s\n%s", describeURI(uri), fence, text)
	if !strings.HasSuffix(text, "\n") {
		sb.WriteByte('\n')
	}
	sb.WriteString(fence)
	return sb.String()
}

// ToolResult turns the bridge's result of a call into the part the model
// reads.
func ToolResult(call *llm.ToolCall, res registry.Result) *llm.ToolResult {
	out := &llm.ToolResult{CallID: call.ID, Name: call.Name, IsError: res.IsError}
	for _, c := range res.Content {
		switch c.Type {
		case presentation.ContentText:
			out.Content = append(out.Content, &llm.Text{Text: c.Text})
		case presentation.ContentImage:
			if data, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
				out.Content = append(out.Content, &llm.Image{MIMEType: c.MIMEType, Data: data})
			} else {
				out.Content = append(out.Content, &llm.Text{Text: "[an image that could not be decoded]"})
			}
		case presentation.ContentResource:
			if c.Text != "" || c.Data == "" {
				out.Content = append(out.Content, &llm.Text{Text: fencedFile(c.URI, c.Text)})
			} else {
				out.Content = append(out.Content, &llm.Text{Text: fmt.Sprintf("[binary resource %s (%s)]", c.URI, orUnknown(c.MIMEType))})
			}
		case presentation.ContentResourceLink:
			out.Content = append(out.Content, &llm.Text{Text: fmt.Sprintf("[resource %s]", describeURI(c.URI))})
		default:
			out.Content = append(out.Content, &llm.Text{Text: fmt.Sprintf("[%s content omitted]", c.Type)})
		}
	}
	if len(out.Content) == 0 {
		switch {
		case res.Error != nil && res.Error.Message != "":
			out.Content = append(out.Content, &llm.Text{Text: res.Error.Message})
		case len(res.Structured) > 0:
			out.Content = append(out.Content, &llm.Text{Text: string(res.Structured)})
		default:
			out.Content = append(out.Content, &llm.Text{Text: "(no output)"})
		}
	}
	if res.AdditionalContext != "" {
		out.Content = append(out.Content, &llm.Text{Text: res.AdditionalContext})
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
