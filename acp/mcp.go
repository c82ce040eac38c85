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

// MCPServer is an MCP server configuration. Value is *MCPServerStdio, *MCPServerHTTP,
// *MCPServerSSE or *UnknownMCPServer. In v1 a stdio server has no "type" key; a stray
// "type":"stdio" (a v2-ism) is accepted on input and dropped on output.
type MCPServer struct{ Value MCPServerVariant }

// MCPServerVariant is a member of [MCPServer].
type MCPServerVariant interface {
	variant
	isMCPServer()
}

// MCPServerStdio is a stdio MCP server; Args and Env are required (sent as [] when nil).
type MCPServerStdio struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Args    []string      `json:"args"`
	Env     []EnvVariable `json:"env"`
	Meta    Meta          `json:"_meta,omitempty"`
}

// MCPServerHTTP is a streamable-HTTP MCP server (only if mcpCapabilities.http).
type MCPServerHTTP struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Headers []HTTPHeader `json:"headers"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// MCPServerSSE is a (deprecated) SSE MCP server (only if mcpCapabilities.sse).
type MCPServerSSE struct {
	Name    string       `json:"name"`
	URL     string       `json:"url"`
	Headers []HTTPHeader `json:"headers"`
	Meta    Meta         `json:"_meta,omitempty"`
}

// UnknownMCPServer is a server config with an unknown type, kept verbatim in Raw.
type UnknownMCPServer struct {
	Type string
	Raw  json.RawMessage
}

func (*MCPServerStdio) wireTag() string          { return "stdio" }
func (*MCPServerHTTP) wireTag() string           { return "http" }
func (*MCPServerSSE) wireTag() string            { return "sse" }
func (u *UnknownMCPServer) wireTag() string      { return u.Type }
func (u *UnknownMCPServer) raw() json.RawMessage { return u.Raw }
func (*MCPServerStdio) isMCPServer()             {}
func (*MCPServerHTTP) isMCPServer()              {}
func (*MCPServerSSE) isMCPServer()               {}
func (*UnknownMCPServer) isMCPServer()           {}

// MarshalJSON implements [json.Marshaler]; nil Args/Env marshal as [].
func (s MCPServerStdio) MarshalJSON() ([]byte, error) {
	type plain MCPServerStdio
	s.Args, s.Env = nonNil(s.Args), nonNil(s.Env)
	return json.Marshal(plain(s))
}

// MarshalJSON implements [json.Marshaler]; nil Headers marshal as [].
func (s MCPServerHTTP) MarshalJSON() ([]byte, error) {
	type plain MCPServerHTTP
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

// MarshalJSON implements [json.Marshaler]; nil Headers marshal as [].
func (s MCPServerSSE) MarshalJSON() ([]byte, error) {
	type plain MCPServerSSE
	s.Headers = nonNil(s.Headers)
	return json.Marshal(plain(s))
}

var mcpServerVariants = map[string]func() MCPServerVariant{
	"stdio": func() MCPServerVariant { return new(MCPServerStdio) },
	"http":  func() MCPServerVariant { return new(MCPServerHTTP) },
	"sse":   func() MCPServerVariant { return new(MCPServerSSE) },
}

// MarshalJSON implements [json.Marshaler]. A stdio server is written without "type".
func (m MCPServer) MarshalJSON() ([]byte, error) {
	if s, ok := m.Value.(*MCPServerStdio); ok && s != nil {
		return json.Marshal(s)
	}
	return marshalTagged("type", "MCPServer", m.Value)
}

// UnmarshalJSON implements [json.Unmarshaler]. No "type" key means stdio.
func (m *MCPServer) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		return nil
	}
	if _, typed, err := lookupKey(data, "type"); err != nil {
		return fmt.Errorf("acp: decoding MCPServer: %w", err)
	} else if !typed {
		s := new(MCPServerStdio)
		if err := json.Unmarshal(data, s); err != nil {
			return fmt.Errorf("acp: decoding stdio MCPServer: %w", err)
		}
		m.Value = s
		return nil
	}
	return unmarshalTagged(data, "type", "MCPServer", mcpServerVariants,
		func(tag string, raw json.RawMessage) MCPServerVariant { return &UnknownMCPServer{Type: tag, Raw: raw} }, &m.Value)
}
