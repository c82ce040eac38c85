package acp

import (
	"encoding/json"
	"fmt"
)

// Meta is a `_meta` object: extension data the protocol reserves for implementations. It is kept
// as raw JSON so foreign values (and their number text) pass through untouched.
type Meta = json.RawMessage

// Role is an audience member of [Annotations].
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are optional display hints on content blocks.
type Annotations struct {
	Audience     []Role   `json:"audience,omitzero"`
	LastModified *string  `json:"lastModified,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	Meta         Meta     `json:"_meta,omitempty"`
}

// ContentBlock is ACP's "type"-tagged content union (the same shape as MCP's ContentBlock).
// Value is one of *TextContent, *ImageContent, *AudioContent, *ResourceLink,
// *EmbeddedResource or *UnknownContent. A zero ContentBlock fails to marshal.
type ContentBlock struct{ Value ContentVariant }

// ContentVariant is a member of [ContentBlock]. Only this package implements it.
type ContentVariant interface {
	variant
	isContent()
}

// TextContent is a "text" block.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ImageContent is an "image" block; Data is base64.
type ImageContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	URI         *string      `json:"uri,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// AudioContent is an "audio" block; Data is base64.
type AudioContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceLink is a "resource_link" block: a reference the agent may fetch itself.
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	MIMEType    *string      `json:"mimeType,omitempty"`
	Title       *string      `json:"title,omitempty"`
	Description *string      `json:"description,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EmbeddedResource is a "resource" block carrying the resource's contents inline.
type EmbeddedResource struct {
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// UnknownContent is a content block with a type this package does not know; Raw is the whole
// block, re-emitted verbatim.
type UnknownContent struct {
	Type string
	Raw  json.RawMessage
}

func (*TextContent) wireTag() string           { return "text" }
func (*ImageContent) wireTag() string          { return "image" }
func (*AudioContent) wireTag() string          { return "audio" }
func (*ResourceLink) wireTag() string          { return "resource_link" }
func (*EmbeddedResource) wireTag() string      { return "resource" }
func (u *UnknownContent) wireTag() string      { return u.Type }
func (u *UnknownContent) raw() json.RawMessage { return u.Raw }

func (*TextContent) isContent()      {}
func (*ImageContent) isContent()     {}
func (*AudioContent) isContent()     {}
func (*ResourceLink) isContent()     {}
func (*EmbeddedResource) isContent() {}
func (*UnknownContent) isContent()   {}

var contentVariants = map[string]func() ContentVariant{
	"text":          func() ContentVariant { return new(TextContent) },
	"image":         func() ContentVariant { return new(ImageContent) },
	"audio":         func() ContentVariant { return new(AudioContent) },
	"resource_link": func() ContentVariant { return new(ResourceLink) },
	"resource":      func() ContentVariant { return new(EmbeddedResource) },
}

func unknownContent(tag string, raw json.RawMessage) ContentVariant {
	return &UnknownContent{Type: tag, Raw: raw}
}

// MarshalJSON implements [json.Marshaler].
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	return marshalTagged("type", "ContentBlock", b.Value)
}

// UnmarshalJSON implements [json.Unmarshaler].
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	return unmarshalTagged(data, "type", "ContentBlock", contentVariants, unknownContent, &b.Value)
}

// Text returns a text content block.
func Text(text string) ContentBlock { return ContentBlock{&TextContent{Text: text}} }

// Audio returns an audio content block; data is base64.
func Audio(data, mimeType string) ContentBlock {
	return ContentBlock{&AudioContent{Data: data, MIMEType: mimeType}}
}

// Link returns a resource_link content block.
func Link(uri, name string) ContentBlock { return ContentBlock{&ResourceLink{URI: uri, Name: name}} }

// ResourceContents is the untagged text/blob union inside an [EmbeddedResource]. Value is
// *TextResourceContents or *BlobResourceContents. The variant is told apart by which of "text"
// and "blob" is present, since the schema gives it no discriminator.
type ResourceContents struct{ Value ResourceContentsVariant }

// ResourceContentsVariant is a member of [ResourceContents].
type ResourceContentsVariant interface{ isResourceContents() }

// TextResourceContents is an embedded text resource.
type TextResourceContents struct {
	URI      string  `json:"uri"`
	Text     string  `json:"text"`
	MIMEType *string `json:"mimeType,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// BlobResourceContents is an embedded binary resource; Blob is base64.
type BlobResourceContents struct {
	URI      string  `json:"uri"`
	Blob     string  `json:"blob"`
	MIMEType *string `json:"mimeType,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

func (*TextResourceContents) isResourceContents() {}
func (*BlobResourceContents) isResourceContents() {}

// MarshalJSON implements [json.Marshaler].
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	switch v := r.Value.(type) {
	case *TextResourceContents:
		if v != nil {
			return json.Marshal(v)
		}
	case *BlobResourceContents:
		if v != nil {
			return json.Marshal(v)
		}
	}
	return nil, fmt.Errorf("acp: cannot marshal an empty ResourceContents")
}

// UnmarshalJSON implements [json.Unmarshaler].
func (r *ResourceContents) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	_, hasBlob, err := lookupKey(data, "blob")
	if err != nil {
		return fmt.Errorf("acp: decoding resource contents: %w", err)
	}
	if hasBlob {
		v := new(BlobResourceContents)
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("acp: decoding blob resource: %w", err)
		}
		r.Value = v
		return nil
	}
	v := new(TextResourceContents)
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("acp: decoding text resource: %w", err)
	}
	r.Value = v
	return nil
}

// Ptr returns a pointer to v, for the optional fields of protocol types.
func Ptr[T any](v T) *T { return &v }
