package acp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// TestSchemaRejects pins the wire shapes that DIGEST.md §7.3/§8.2/§10 says agents get wrong:
// the schema rejects each bad instance, and this package's encoding of the same thing is valid.
func TestSchemaRejects(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	tests := []struct {
		name string
		def  string
		bad  string
		good any // what this package sends instead
	}{
		{"currentModeId not modeId", "SessionUpdate",
			`{"sessionUpdate":"current_mode_update","modeId":"code"}`,
			acp.Update(&acp.CurrentModeUpdate{CurrentModeID: "code"})},
		{"no cancelled tool status", "SessionUpdate",
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","status":"cancelled"}`,
			acp.Update(&acp.ToolCall{ToolCallID: "c", Title: "t", Status: acp.ToolCallFailed})},
		{"no error stop reason", "PromptResponse", `{"stopReason":"error"}`,
			&acp.PromptResponse{StopReason: acp.StopCancelled}},
		{"load result is an object, not null", "LoadSessionResponse", `null`,
			&acp.LoadSessionResponse{}},
		{"session capabilities are objects", "AgentCapabilities", `{"sessionCapabilities":{"list":true}}`,
			&acp.AgentCapabilities{SessionCapabilities: &acp.SessionCapabilities{List: &acp.Capability{}}}},
		{"logout capability is an object", "AgentCapabilities", `{"auth":{"logout":true}}`,
			&acp.AgentCapabilities{Auth: &acp.AgentAuthCapabilities{Logout: &acp.Capability{}}}},
		{"protocol version is an integer", "InitializeResponse", `{"protocolVersion":"1"}`,
			&acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion1}},
		{"stdio MCP server needs args and env", "McpServer", `{"name":"x","command":"/bin/x"}`,
			acp.MCPServer{Value: &acp.MCPServerStdio{Name: "x", Command: "/bin/x"}}},
		{"tool call content is wrapped", "ToolCallContent", `{"type":"text","text":"hi"}`,
			acp.ToolText("hi")},
		{"permission toolCall content is wrapped", "RequestPermissionRequest",
			`{"sessionId":"s","toolCall":{"toolCallId":"c","content":[{"type":"text","text":"hi"}]},"options":[]}`,
			&acp.RequestPermissionRequest{SessionID: "s", ToolCall: acp.ToolCallUpdate{ToolCallID: "c", Content: []acp.ToolCallContent{acp.ToolText("hi")}}}},
		{"elicitation needs a scope", "CreateElicitationRequest",
			`{"mode":"url","message":"m","elicitationId":"e","url":"https://x.example"}`,
			acp.URLElicitation("s", "m", "e", "https://x.example")},
		{"boolean config value needs type", "SetSessionConfigOptionRequest",
			`{"sessionId":"s","configId":"c","value":true}`,
			&acp.SetSessionConfigOptionRequest{SessionID: "s", ConfigID: "c", Value: acp.ConfigValue{Bool: acp.Ptr(true)}}},
		{"usage is unsigned", "SessionUpdate", `{"sessionUpdate":"usage_update","used":-1,"size":10}`,
			acp.Update(&acp.UsageUpdate{Used: 0, Size: 10})},
		{"required arrays are never null", "Plan", `{"entries":null}`, &acp.Plan{}},
		{"available commands never null", "AvailableCommandsUpdate", `{"availableCommands":null}`, &acp.AvailableCommandsUpdate{}},
		{"config options never null", "SetSessionConfigOptionResponse", `{"configOptions":null}`, &acp.SetSessionConfigOptionResponse{}},
		{"sessions never null", "ListSessionsResponse", `{"sessions":null}`, &acp.ListSessionsResponse{}},
		{"permission options never null", "RequestPermissionRequest", `{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":null}`,
			&acp.RequestPermissionRequest{SessionID: "s", ToolCall: acp.ToolCallUpdate{ToolCallID: "c"}}},
		{"prompt never null", "PromptRequest", `{"sessionId":"s","prompt":null}`, &acp.PromptRequest{SessionID: "s"}},
		{"mcpServers never null", "NewSessionRequest", `{"cwd":"/w","mcpServers":null}`, &acp.NewSessionRequest{Cwd: "/w"}},
		{"tool call optional fields are not null", "ToolCall", `{"toolCallId":"c","title":"t","kind":null}`,
			&acp.ToolCall{ToolCallID: "c", Title: "t"}},
		{"agent capabilities are not null", "InitializeResponse", `{"protocolVersion":1,"agentCapabilities":null}`,
			&acp.InitializeResponse{ProtocolVersion: 1}},
		{"terminal args are not null", "CreateTerminalRequest", `{"sessionId":"s","command":"ls","args":null}`,
			&acp.CreateTerminalRequest{SessionID: "s", Command: "ls"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := v.ValidateDef(tc.def, []byte(tc.bad)); err == nil {
				t.Errorf("schema accepted the bad instance %s", tc.bad)
			}
			good, err := json.Marshal(tc.good)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.ValidateDef(tc.def, good); err != nil {
				t.Errorf("our encoding %s is invalid: %v", good, err)
			}
		})
	}
}

// TestSchemaAccepts pins instances the schema accepts that a strict implementation might not.
func TestSchemaAccepts(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	for _, tc := range []struct{ def, instance string }{
		{"LoadSessionResponse", `{}`},
		{"WriteTextFileResponse", `{}`},
		{"ResumeSessionRequest", `{"sessionId":"s","cwd":"/w"}`},
		{"InitializeRequest", `{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":true,"terminal-auth":true}}}`},
	} {
		if err := v.ValidateDef(tc.def, []byte(tc.instance)); err != nil {
			t.Errorf("%s rejected %s: %v", tc.def, tc.instance, err)
		}
	}
}

// TestEncodingRules checks encodings byte for byte, independent of the schema file.
func TestEncodingRules(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"minimal tool_call omits optional fields", acp.Update(&acp.ToolCall{ToolCallID: "c", Title: "t"}),
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"t"}`},
		{"tool_call_update sends only what changed", acp.Update(&acp.ToolCallUpdate{ToolCallID: "c", Status: acp.Ptr(acp.ToolCallInProgress)}),
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress"}`},
		{"empty content clears, nil omits", acp.Update(&acp.ToolCallUpdate{ToolCallID: "c", Content: []acp.ToolCallContent{}}),
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[]}`},
		{"current mode key", acp.Update(&acp.CurrentModeUpdate{CurrentModeID: "m"}),
			`{"sessionUpdate":"current_mode_update","currentModeId":"m"}`},
		{"wrapped tool content", acp.ToolText("x"), `{"type":"content","content":{"type":"text","text":"x"}}`},
		{"new file diff", acp.Diff("/a", nil, "x"), `{"type":"diff","path":"/a","oldText":null,"newText":"x"}`},
		{"load result is {}", &acp.LoadSessionResponse{}, `{}`},
		{"capability object", &acp.SessionCapabilities{Resume: &acp.Capability{}}, `{"resume":{}}`},
		{"minimal initialize result", &acp.InitializeResponse{ProtocolVersion: 1}, `{"protocolVersion":1}`},
		{"stdio server arrays", acp.MCPServer{Value: &acp.MCPServerStdio{Name: "x", Command: "/x"}}, `{"name":"x","command":"/x","args":[],"env":[]}`},
		{"plan entries", acp.Update(&acp.Plan{}), `{"sessionUpdate":"plan","entries":[]}`},
		{"cancelled outcome", acp.Cancelled(), `{"outcome":"cancelled"}`},
		{"session info absent", acp.Update(&acp.SessionInfoUpdate{}), `{"sessionUpdate":"session_info_update"}`},
		{"agent auth method has no type", acp.AuthMethod{Value: &acp.AuthMethodAgent{ID: "a", Name: "A"}}, `{"id":"a","name":"A"}`},
		{"select options default to []", acp.SessionConfigOption{Value: &acp.SelectConfigOption{ID: "i", Name: "n", CurrentValue: "v"}},
			`{"type":"select","id":"i","name":"n","currentValue":"v","options":[]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestLenientDecoding: client input with unknown fields, _meta and v2-isms decodes.
func TestLenientDecoding(t *testing.T) {
	var req acp.NewSessionRequest
	in := `{"cwd":"/w","mcpServers":[{"type":"stdio","name":"x","command":"/x","args":[],"env":[],"future":1}],"futureField":{"a":1},"_meta":{"k":1}}`
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	s, ok := req.MCPServers[0].Value.(*acp.MCPServerStdio)
	if !ok || s.Command != "/x" {
		t.Fatalf("stdio server with type:stdio decoded as %#v", req.MCPServers[0].Value)
	}
	out, _ := json.Marshal(req.MCPServers[0])
	if strings.Contains(string(out), `"type"`) {
		t.Errorf("stdio server re-encoded with a type: %s", out)
	}

	var set acp.SetSessionConfigOptionRequest
	if err := json.Unmarshal([]byte(`{"sessionId":"s","configId":"c","value":false}`), &set); err != nil {
		t.Fatal(err)
	}
	if set.Value.Bool == nil || *set.Value.Bool {
		t.Errorf("boolean value without type: got %+v", set.Value)
	}

	var resp acp.WriteTextFileResponse
	if err := json.Unmarshal([]byte(`null`), &resp); err != nil {
		t.Errorf("null write result: %v", err)
	}

	var init acp.InitializeRequest
	if err := json.Unmarshal([]byte(`{"protocolVersion":"1"}`), &init); err == nil {
		t.Error("a string protocolVersion decoded without error")
	}
	var usage acp.SessionUpdate
	if err := json.Unmarshal([]byte(`{"sessionUpdate":"usage_update","used":-1,"size":1}`), &usage); err == nil {
		t.Error("negative usage decoded without error")
	}
}

// TestUnknownVariantsVerbatim: unknown tags survive decode → encode byte for byte.
func TestUnknownVariantsVerbatim(t *testing.T) {
	cases := map[string]func([]byte) ([]byte, any, error){
		`{"type":"video","url":"x","n":1.50}`:                                                roundTrip[acp.ContentBlock],
		`{"sessionUpdate":"plan_update","plan":{"type":"items","big":12345678901234567890}}`: roundTrip[acp.SessionUpdate],
		`{"type":"text","text":"bare"}`:                                                      roundTrip[acp.ToolCallContent],
		`{"outcome":"_later","when":"tomorrow"}`:                                             roundTrip[acp.RequestPermissionOutcome],
		`{"type":"_slider","id":"s","name":"S","min":0}`:                                     roundTrip[acp.SessionConfigOption],
		`{"type":"acp","name":"x","serverId":"y"}`:                                           roundTrip[acp.MCPServer],
		`{"type":"_oauth","id":"o","name":"O"}`:                                              roundTrip[acp.AuthMethod],
		`{"type":"_color","title":"C"}`:                                                      roundTrip[acp.ElicitationPropertySchema],
	}
	for in, rt := range cases {
		out, v, err := rt([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if string(out) != in {
			t.Errorf("%s re-encoded as %s (%T)", in, out, v)
		}
	}
}

func roundTrip[T any](in []byte) ([]byte, any, error) {
	var v T
	if err := json.Unmarshal(in, &v); err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(v)
	return out, v, err
}

// TestUnionErrors: a missing tag is an error and a zero wrapper does not marshal.
func TestUnionErrors(t *testing.T) {
	var b acp.ContentBlock
	if err := json.Unmarshal([]byte(`{"text":"no tag"}`), &b); err == nil {
		t.Error("missing type decoded without error")
	}
	if err := json.Unmarshal([]byte(`{"type":7}`), &b); err == nil {
		t.Error("non-string type decoded without error")
	}
	for _, zero := range []any{acp.ContentBlock{}, acp.SessionUpdate{}, acp.ToolCallContent{}, acp.RequestPermissionOutcome{},
		acp.SessionConfigOption{}, acp.MCPServer{}, acp.AuthMethod{}, acp.ResourceContents{}, acp.ContentBlock{Value: (*acp.TextContent)(nil)}} {
		if _, err := json.Marshal(zero); err == nil {
			t.Errorf("zero %T marshalled", zero)
		}
	}
}

// TestErrorIs: *Error matches by code, through wrapping.
func TestErrorIs(t *testing.T) {
	err := errors.Join(errors.New("x"), acp.ResourceNotFound("file:///a"))
	if !errors.Is(err, acp.ErrResourceNotFound) || errors.Is(err, acp.ErrInternal) {
		t.Errorf("Is by code failed for %v", err)
	}
	wrapped := errors.New("outer")
	if errors.Is(wrapped, acp.ErrInternal) {
		t.Error("unrelated error matched")
	}
	var e *acp.Error
	if !errors.As(acp.NewError(-32000, "auth"), &e) || !errors.Is(e, acp.ErrAuthRequired) {
		t.Error("NewError(-32000) is not ErrAuthRequired")
	}
}

// TestCompactionUpdatePatch: summary, error and _meta of a compaction_update have patch
// semantics (absent = unchanged, null = clear, a value = replace), so each of the three states
// survives decode → encode.
func TestCompactionUpdatePatch(t *testing.T) {
	const head = `{"sessionUpdate":"compaction_update","compactionId":"c","status":"completed"`
	for _, in := range []string{
		head + `}`,
		head + `,"summary":null,"error":null,"_meta":null}`,
		head + `,"summary":[],"error":"quota","_meta":{"k":1}}`,
		head + `,"summary":[{"type":"text","text":"s"}],"_meta":null}`,
		head + `,"error":null}`,
	} {
		out, _, err := roundTrip[acp.SessionUpdate]([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if string(out) != in {
			t.Errorf("%s re-encoded as %s", in, out)
		}
	}

	var u acp.SessionUpdate
	if err := json.Unmarshal([]byte(head+`,"summary":null,"error":null}`), &u); err != nil {
		t.Fatal(err)
	}
	c, ok := u.Value.(*acp.CompactionUpdate)
	switch {
	case !ok:
		t.Fatalf("decoded %T", u.Value)
	case !c.Summary.IsNull() || !c.Error.IsNull():
		t.Errorf("summary %+v, error %+v: want both null (clear)", c.Summary, c.Error)
	case !c.Meta.IsZero():
		t.Errorf("_meta %+v: want absent (unchanged)", c.Meta)
	}
}
