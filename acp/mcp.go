package acp

import (
	"encoding/json"
	"fmt"
)

// EnvVariable is an environment variable for an MCP server or a terminal.
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// HTTPHeader is an HTTP header for an MCP server.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// McpServer is an MCP server configuration. Value is *McpServerStdio, *McpServerHTTP,
// *McpServerSSE or *UnknownMcpServer. In v1 a stdio server has no "type" key; a stray
// "type":"stdio" (a v2-ism) is accepted on input and dropped on output.
type McpServer struct{ Value McpServerVariant }

// McpServerVariant is a member of [McpServer].
type McpServerVariant interface {
	variant
	isMcpServer()
}

// McpServerStdio is a stdio MCP server; Args and Env are required (sent as [] when nil).
type McpServerStdio struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Args    []string      `json:"args"`
	Env     []EnvVariable `json:"env"`
	Meta    Meta          `json:"_meta,omitempty"`
}

// McpServerHTTP is a streamable-HTTP MCP server (only if mcpCapabilities.http).
type McpServerHTTP struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Headers []HTTPHeader `json:"headers"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// McpServerSSE is a (deprecated) SSE MCP server (only if mcpCapabilities.sse).
type McpServerSSE struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Headers []HTTPHeader `json:"headers"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// UnknownMcpServer is a server config with an unknown type, kept verbatim in Raw.
type UnknownMcpServer struct {
	Type string
	Raw  json.RawMessage
}

func (*McpServerStdio) wireTag() string          { return "stdio" }
func (*McpServerHTTP) wireTag() string           { return "http" }
func (*McpServerSSE) wireTag() string            { return "sse" }
func (u *UnknownMcpServer) wireTag() string      { return u.Type }
func (u *UnknownMcpServer) raw() json.RawMessage { return u.Raw }
func (*McpServerStdio) isMcpServer()             {}
func (*McpServerHTTP) isMcpServer()              {}
func (*McpServerSSE) isMcpServer()               {}
func (*UnknownMcpServer) isMcpServer()           {}

// MarshalJSON implements [json.Marshaler]; nil Args/Env marshal as [].
func (s McpServerStdio) MarshalJSON() ([]byte, error) {
	type plain McpServerStdio
	s.Args, s.Env = nonNil(s.Args), nonNil(s.Env)
	return json.Marshal(plain(s))
}

// MarshalJSON implements [json.Marshaler]; nil Headers marshal as [].
func (s McpServerHTTP) MarshalJSON() ([]byte, error) {
	type plain McpServerHTTP
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

// MarshalJSON implements [json.Marshaler]; nil Headers marshal as [].
func (s McpServerSSE) MarshalJSON() ([]byte, error) {
	type plain McpServerSSE
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

var mcpServerVariants = map[string]func() McpServerVariant{
	"stdio": func() McpServerVariant { return new(McpServerStdio) },
	"http":  func() McpServerVariant { return new(McpServerHTTP) },
	"sse":   func() McpServerVariant { return new(McpServerSSE) },
}

// MarshalJSON implements [json.Marshaler]. A stdio server is written without "type".
func (m McpServer) MarshalJSON() ([]byte, error) {
	if s, ok := m.Value.(*McpServerStdio); ok && s != nil {
		return json.Marshal(s)
	}
	return marshalTagged("type", "McpServer", m.Value)
}

// UnmarshalJSON implements [json.Unmarshaler]. No "type" key means stdio.
func (m *McpServer) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	if _, typed, err := lookupKey(data, "type"); err != nil {
		return fmt.Errorf("acp: decoding McpServer: %w", err)
	} else if !typed {
		s := new(McpServerStdio)
		if err := json.Unmarshal(data, s); err != nil {
			return fmt.Errorf("acp: decoding stdio McpServer: %w", err)
		}
		m.Value = s
		return nil
	}
	return unmarshalTagged(data, "type", "McpServer", mcpServerVariants,
		func(tag string, raw json.RawMessage) McpServerVariant { return &UnknownMcpServer{Type: tag, Raw: raw} }, &m.Value)
}
