package acp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

func meta(k string) acp.Meta { return acp.Meta(`{"example.dev/` + k + `":{"n":12345678901234567890}}`) }

func annotations() *acp.Annotations {
	return &acp.Annotations{
		Audience:     []acp.Role{acp.RoleUser, acp.RoleAssistant},
		LastModified: acp.Ptr("2026-08-01T10:00:00Z"),
		Priority:     acp.Ptr(0.5),
		Meta:         meta("ann"),
	}
}

func textBlock() acp.ContentBlock {
	return acp.ContentBlock{Value: &acp.TextContent{Text: "hello\nworld <&>", Annotations: annotations(), Meta: meta("text")}}
}

func toolCallContents() []acp.ToolCallContent {
	return []acp.ToolCallContent{
		{Value: &acp.ToolCallContentBlock{Content: textBlock(), Meta: meta("content")}},
		{Value: &acp.ToolCallDiff{Path: "/work/a.go", OldText: acp.Ptr("old\n"), NewText: "new\n", Meta: meta("diff")}},
		{Value: &acp.ToolCallTerminal{TerminalID: "term-1", Meta: meta("terminal")}},
	}
}

func locations() []acp.ToolCallLocation {
	return []acp.ToolCallLocation{{Path: "/work/a.go", Line: acp.Ptr(uint32(12)), Meta: meta("loc")}}
}

func toolCallUpdate() *acp.ToolCallUpdate {
	return &acp.ToolCallUpdate{
		ToolCallID: "call-1",
		Title:      acp.Ptr("Edit a.go"),
		Name:       acp.Ptr("edit"),
		Kind:       acp.Ptr(acp.ToolKindEdit),
		Status:     acp.Ptr(acp.ToolCallCompleted),
		Content:    toolCallContents(),
		Locations:  locations(),
		RawInput:   json.RawMessage(`{"path":"/work/a.go","big":12345678901234567890}`),
		RawOutput:  json.RawMessage(`{"ok":true}`),
		Meta:       meta("tcu"),
	}
}

func configOptions() []acp.SessionConfigOption {
	return []acp.SessionConfigOption{
		{Value: &acp.SelectConfigOption{
			ID: "mode", Name: "Mode", Description: acp.Ptr("How the agent works"), Category: acp.Ptr(acp.ConfigCategoryMode),
			CurrentValue: "ask",
			Options: acp.SelectOptions{Flat: []acp.SelectOption{
				{Value: "ask", Name: "Ask", Description: acp.Ptr("Ask first"), Meta: meta("opt")},
				{Value: "code", Name: "Code"},
			}},
			Meta: meta("select"),
		}},
		{Value: &acp.SelectConfigOption{
			ID: "model", Name: "Model", Category: acp.Ptr(acp.ConfigCategoryModel), CurrentValue: "m1",
			Options: acp.SelectOptions{Groups: []acp.SelectGroup{
				{Group: "fast", Name: "Fast", Options: []acp.SelectOption{{Value: "m1", Name: "M1"}}, Meta: meta("group")},
			}},
		}},
		{Value: &acp.BooleanConfigOption{
			ID: "yolo", Name: "Auto-approve", Description: acp.Ptr("Skip prompts"), Category: acp.Ptr("_example"),
			CurrentValue: true, Meta: meta("bool"),
		}},
	}
}

func modes() *acp.SessionModeState {
	return &acp.SessionModeState{
		CurrentModeID:  "ask",
		AvailableModes: []acp.SessionMode{{ID: "ask", Name: "Ask", Description: acp.Ptr("Ask first"), Meta: meta("mode")}, {ID: "code", Name: "Code"}},
		Meta:           meta("modes"),
	}
}

func mcpServers() []acp.MCPServer {
	return []acp.MCPServer{
		{Value: &acp.MCPServerStdio{Name: "fs", Command: "/usr/bin/mcp-fs", Args: []string{"--root", "/work"},
			Env: []acp.EnvVariable{{Name: "DEBUG", Value: "1", Meta: meta("env")}}, Meta: meta("stdio")}},
		{Value: &acp.MCPServerHTTP{Name: "web", URL: "https://mcp.example.com", Headers: []acp.HTTPHeader{{Name: "Authorization", Value: "Bearer x", Meta: meta("hdr")}}, Meta: meta("http")}},
		{Value: &acp.MCPServerSSE{Name: "old", URL: "https://sse.example.com", Headers: []acp.HTTPHeader{}, Meta: meta("sse")}},
	}
}

func elicitationSchema() acp.ElicitationSchema {
	return acp.ElicitationSchema{
		Type: "object", Title: acp.Ptr("Details"), Description: acp.Ptr("Tell us more"),
		Properties: map[string]acp.ElicitationPropertySchema{
			"name": {Value: &acp.StringPropertySchema{Title: acp.Ptr("Name"), Description: acp.Ptr("Your name"),
				MinLength: acp.Ptr(uint32(1)), MaxLength: acp.Ptr(uint32(40)), Pattern: acp.Ptr("^[a-z]+$"),
				Format: acp.Ptr("email"), Default: acp.Ptr("a@b.c"), Enum: []string{"a@b.c"},
				OneOf: []acp.EnumOption{{Const: "a@b.c", Title: "A", Description: acp.Ptr("the a"), Meta: meta("enum")}}, Meta: meta("str")}},
			"ratio": {Value: &acp.NumberPropertySchema{Title: acp.Ptr("Ratio"), Description: acp.Ptr("0..1"), Minimum: acp.Ptr(0.0), Maximum: acp.Ptr(1.0), Default: acp.Ptr(0.5), Meta: meta("num")}},
			"count": {Value: &acp.IntegerPropertySchema{Title: acp.Ptr("Count"), Description: acp.Ptr("how many"), Minimum: acp.Ptr(int64(1)), Maximum: acp.Ptr(int64(9)), Default: acp.Ptr(int64(3)), Meta: meta("int")}},
			"ok":    {Value: &acp.BooleanPropertySchema{Title: acp.Ptr("OK"), Description: acp.Ptr("agree"), Default: acp.Ptr(true), Meta: meta("bool")}},
			"tags": {Value: &acp.MultiSelectPropertySchema{Title: acp.Ptr("Tags"), Description: acp.Ptr("pick"), MinItems: acp.Ptr(uint64(1)), MaxItems: acp.Ptr(uint64(2)),
				Items: acp.MultiSelectItems{Enum: []string{"x", "y"}, Meta: meta("items")}, Default: []string{"x"}, Meta: meta("multi")}},
			"titled": {Value: &acp.MultiSelectPropertySchema{Items: acp.MultiSelectItems{AnyOf: []acp.EnumOption{{Const: "x", Title: "X"}}}}},
		},
		Required: []string{"name"},
		Meta:     meta("schema"),
	}
}

// golden is one maximal instance: every optional field set.
type golden struct {
	name  string // file name under testdata/golden
	def   string // $defs entry it must satisfy
	value any    // pointer to the value
}

func goldens() []golden {
	u := func(v acp.SessionUpdateVariant) *acp.SessionUpdate { return &acp.SessionUpdate{Value: v} }
	return []golden{
		// Content blocks.
		{"content_text", "ContentBlock", acp.Ptr(textBlock())},
		{"content_image", "ContentBlock", &acp.ContentBlock{Value: &acp.ImageContent{Data: "iVBORw0KGgo=", MIMEType: "image/png", URI: acp.Ptr("file:///work/a.png"), Annotations: annotations(), Meta: meta("img")}}},
		{"content_audio", "ContentBlock", &acp.ContentBlock{Value: &acp.AudioContent{Data: "UklGRg==", MIMEType: "audio/wav", Annotations: annotations(), Meta: meta("aud")}}},
		{"content_resource_link", "ContentBlock", &acp.ContentBlock{Value: &acp.ResourceLink{URI: "file:///work/a.go", Name: "a.go", MIMEType: acp.Ptr("text/x-go"), Title: acp.Ptr("A"), Description: acp.Ptr("the file"), Size: acp.Ptr(int64(1234)), Annotations: annotations(), Meta: meta("link")}}},
		{"content_resource_text", "ContentBlock", &acp.ContentBlock{Value: &acp.EmbeddedResource{Resource: acp.ResourceContents{Value: &acp.TextResourceContents{URI: "file:///work/a.go", Text: "package a\n", MIMEType: acp.Ptr("text/x-go"), Meta: meta("trc")}}, Annotations: annotations(), Meta: meta("res")}}},
		{"content_resource_blob", "ContentBlock", &acp.ContentBlock{Value: &acp.EmbeddedResource{Resource: acp.ResourceContents{Value: &acp.BlobResourceContents{URI: "file:///work/a.bin", Blob: "AAEC", MIMEType: acp.Ptr("application/octet-stream"), Meta: meta("brc")}}, Annotations: annotations(), Meta: meta("res")}}},
		// Tool call content.
		{"toolcallcontent_content", "ToolCallContent", &toolCallContents()[0]},
		{"toolcallcontent_diff", "ToolCallContent", &toolCallContents()[1]},
		{"toolcallcontent_terminal", "ToolCallContent", &toolCallContents()[2]},
		// Session updates.
		{"update_user_message_chunk", "SessionUpdate", u(&acp.UserMessageChunk{Content: textBlock(), MessageID: acp.Ptr("m1"), Meta: meta("c")})},
		{"update_agent_message_chunk", "SessionUpdate", u(&acp.AgentMessageChunk{Content: textBlock(), MessageID: acp.Ptr("m2"), Meta: meta("c")})},
		{"update_agent_thought_chunk", "SessionUpdate", u(&acp.AgentThoughtChunk{Content: textBlock(), MessageID: acp.Ptr("m3"), Meta: meta("c")})},
		{"update_tool_call", "SessionUpdate", u(&acp.ToolCall{ToolCallID: "call-1", Title: "Edit a.go", Name: acp.Ptr("edit"), Kind: acp.ToolKindEdit, Status: acp.ToolCallPending,
			Content: toolCallContents(), Locations: locations(), RawInput: json.RawMessage(`{"path":"/work/a.go"}`), RawOutput: json.RawMessage(`[1,2.50,"x"]`), Meta: meta("tc")})},
		{"update_tool_call_update", "SessionUpdate", u(toolCallUpdate())},
		{"update_plan", "SessionUpdate", u(&acp.Plan{Entries: []acp.PlanEntry{{Content: "Read", Priority: acp.PlanPriorityHigh, Status: acp.PlanEntryInProgress, Meta: meta("pe")}}, Meta: meta("plan")})},
		{"update_available_commands_update", "SessionUpdate", u(&acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{{Name: "web", Description: "Search the web", Input: &acp.AvailableCommandInput{Hint: "query", Meta: meta("in")}, Meta: meta("cmd")}}, Meta: meta("acu")})},
		{"update_current_mode_update", "SessionUpdate", u(&acp.CurrentModeUpdate{CurrentModeID: "code", Meta: meta("cmu")})},
		{"update_config_option_update", "SessionUpdate", u(&acp.ConfigOptionUpdate{ConfigOptions: configOptions(), Meta: meta("cou")})},
		{"update_session_info_update", "SessionUpdate", u(&acp.SessionInfoUpdate{Title: acp.Some("Fix the bug"), UpdatedAt: acp.Some("2026-08-01T10:00:00Z"), Meta: meta("siu")})},
		{"update_session_info_update_clear", "SessionUpdate", u(&acp.SessionInfoUpdate{Title: acp.Null[string]()})},
		{"update_usage_update", "SessionUpdate", u(&acp.UsageUpdate{Used: 1200, Size: 200000, Cost: &acp.Cost{Amount: 0.25, Currency: "USD", Meta: meta("cost")}, Meta: meta("uu")})},
		{"update_notice", "SessionUpdate", u(&acp.Notice{Severity: acp.NoticeWarning, Title: "Rate limited", Description: acp.Ptr("Retrying"), Meta: meta("n")})},
		{"update_compaction_update", "SessionUpdate", u(&acp.CompactionUpdate{CompactionID: "cmp-1", Status: acp.CompactionCompleted, Summary: acp.Some([]acp.ContentBlock{textBlock()}), Error: acp.Some("none"), Meta: acp.Some(meta("cu"))})},
		{"update_compaction_update_clear", "SessionUpdate", u(&acp.CompactionUpdate{CompactionID: "cmp-1", Status: acp.CompactionFailed, Summary: acp.Null[[]acp.ContentBlock](), Error: acp.Null[string](), Meta: acp.Null[acp.Meta]()})},
		{"update_compaction_update_unchanged", "SessionUpdate", u(&acp.CompactionUpdate{CompactionID: "cmp-1", Status: acp.CompactionInProgress})},
		{"update_compaction_summary_chunk", "SessionUpdate", u(&acp.CompactionSummaryChunk{CompactionID: "cmp-1", Content: textBlock(), Meta: meta("csc")})},
		{"session_notification", "SessionNotification", &acp.SessionNotification{SessionID: "s1", Update: acp.AgentMessage("hi"), Meta: meta("sn")}},
		// Agent methods.
		{"initialize_request", "InitializeRequest", &acp.InitializeRequest{
			ProtocolVersion: acp.ProtocolVersion1,
			ClientCapabilities: &acp.ClientCapabilities{
				FS:          &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true, Meta: meta("fs")},
				Terminal:    true,
				Session:     &acp.ClientSessionCapabilities{Compaction: &acp.Capability{}, ConfigOptions: &acp.SessionConfigOptionsCapabilities{Boolean: &acp.Capability{Meta: meta("b")}, Meta: meta("co")}, Notices: &acp.Capability{}, Meta: meta("sess")},
				Auth:        &acp.AuthCapabilities{Terminal: true, Meta: meta("auth")},
				Elicitation: &acp.ElicitationCapabilities{Form: &acp.Capability{Meta: meta("f")}, URL: &acp.Capability{}, Meta: meta("el")},
				Meta:        acp.Meta(`{"terminal_output":true,"terminal-auth":true}`),
			},
			ClientInfo: &acp.Implementation{Name: "zed", Version: "1.0.0", Title: acp.Ptr("Zed"), Meta: meta("ci")},
			Meta:       meta("init"),
		}},
		{"initialize_response", "InitializeResponse", &acp.InitializeResponse{
			ProtocolVersion: acp.ProtocolVersion1,
			AgentCapabilities: &acp.AgentCapabilities{
				LoadSession:         true,
				PromptCapabilities:  &acp.PromptCapabilities{Image: true, Audio: true, EmbeddedContext: true, Meta: meta("pc")},
				MCPCapabilities:     &acp.MCPCapabilities{HTTP: true, SSE: true, Meta: meta("mc")},
				SessionCapabilities: &acp.SessionCapabilities{List: &acp.Capability{}, Delete: &acp.Capability{}, AdditionalDirectories: &acp.Capability{}, Resume: &acp.Capability{}, Close: &acp.Capability{Meta: meta("close")}, Meta: meta("sc")},
				Auth:                &acp.AgentAuthCapabilities{Logout: &acp.Capability{}, Meta: meta("aa")},
				Meta:                meta("ac"),
			},
			AuthMethods: []acp.AuthMethod{
				{Value: &acp.AuthMethodAgent{ID: "oauth", Name: "Log in", Description: acp.Ptr("Browser login"), Meta: meta("am")}},
				{Value: &acp.AuthMethodTerminal{ID: "tty", Name: "Terminal login", Description: acp.Ptr("Run login"), Args: []string{"--login"}, Env: map[string]string{"MODE": "login"}, Meta: meta("at")}},
			},
			AgentInfo: &acp.Implementation{Name: "dshd", Version: "0.1.0", Title: acp.Ptr("dshd"), Meta: meta("ai")},
			Meta:      meta("ir"),
		}},
		{"authenticate_request", "AuthenticateRequest", &acp.AuthenticateRequest{MethodID: "oauth", Meta: meta("a")}},
		{"authenticate_response", "AuthenticateResponse", &acp.AuthenticateResponse{Meta: meta("a")}},
		{"logout_request", "LogoutRequest", &acp.LogoutRequest{Meta: meta("l")}},
		{"logout_response", "LogoutResponse", &acp.LogoutResponse{Meta: meta("l")}},
		{"new_session_request", "NewSessionRequest", &acp.NewSessionRequest{Cwd: "/work", MCPServers: mcpServers(), AdditionalDirectories: []string{"/lib"}, Meta: meta("ns")}},
		{"new_session_response", "NewSessionResponse", &acp.NewSessionResponse{SessionID: "s1", Modes: modes(), ConfigOptions: configOptions(), Meta: meta("ns")}},
		{"load_session_request", "LoadSessionRequest", &acp.LoadSessionRequest{SessionID: "s1", Cwd: "/work", MCPServers: mcpServers(), AdditionalDirectories: []string{"/lib"}, Meta: meta("ls")}},
		{"load_session_response", "LoadSessionResponse", &acp.LoadSessionResponse{Modes: modes(), ConfigOptions: configOptions(), Meta: meta("ls")}},
		{"list_sessions_request", "ListSessionsRequest", &acp.ListSessionsRequest{Cwd: acp.Ptr("/work"), Cursor: acp.Ptr("c1"), Meta: meta("l")}},
		{"list_sessions_response", "ListSessionsResponse", &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{{SessionID: "s1", Cwd: "/work", AdditionalDirectories: []string{"/lib"}, Title: acp.Ptr("Fix"), UpdatedAt: acp.Ptr("2026-08-01T10:00:00Z"), Meta: meta("si")}}, NextCursor: acp.Ptr("c2"), Meta: meta("l")}},
		{"resume_session_request", "ResumeSessionRequest", &acp.ResumeSessionRequest{SessionID: "s1", Cwd: "/work", MCPServers: mcpServers(), AdditionalDirectories: []string{"/lib"}, Meta: meta("r")}},
		{"resume_session_response", "ResumeSessionResponse", &acp.ResumeSessionResponse{Modes: modes(), ConfigOptions: configOptions(), Meta: meta("r")}},
		{"close_session_request", "CloseSessionRequest", &acp.CloseSessionRequest{SessionID: "s1", Meta: meta("c")}},
		{"close_session_response", "CloseSessionResponse", &acp.CloseSessionResponse{Meta: meta("c")}},
		{"delete_session_request", "DeleteSessionRequest", &acp.DeleteSessionRequest{SessionID: "s1", Meta: meta("d")}},
		{"delete_session_response", "DeleteSessionResponse", &acp.DeleteSessionResponse{Meta: meta("d")}},
		{"set_session_mode_request", "SetSessionModeRequest", &acp.SetSessionModeRequest{SessionID: "s1", ModeID: "code", Meta: meta("m")}},
		{"set_session_mode_response", "SetSessionModeResponse", &acp.SetSessionModeResponse{Meta: meta("m")}},
		{"set_config_option_request_select", "SetSessionConfigOptionRequest", &acp.SetSessionConfigOptionRequest{SessionID: "s1", ConfigID: "mode", Value: acp.ConfigValue{ID: "code"}, Meta: meta("o")}},
		{"set_config_option_request_boolean", "SetSessionConfigOptionRequest", &acp.SetSessionConfigOptionRequest{SessionID: "s1", ConfigID: "yolo", Value: acp.ConfigValue{Bool: acp.Ptr(true)}, Meta: meta("o")}},
		{"set_config_option_response", "SetSessionConfigOptionResponse", &acp.SetSessionConfigOptionResponse{ConfigOptions: configOptions(), Meta: meta("o")}},
		{"prompt_request", "PromptRequest", &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{textBlock(), acp.Link("file:///work/a.go", "a.go")}, Meta: meta("p")}},
		{"prompt_response", "PromptResponse", &acp.PromptResponse{StopReason: acp.StopEndTurn, Meta: meta("p")}},
		{"cancel_notification", "CancelNotification", &acp.CancelNotification{SessionID: "s1", Meta: meta("c")}},
		{"cancel_request_notification", "CancelRequestNotification", &acp.CancelRequestNotification{RequestID: acp.IntRequestID(7), Meta: meta("cr")}},
		// Client methods.
		{"request_permission_request", "RequestPermissionRequest", &acp.RequestPermissionRequest{SessionID: "s1", ToolCall: *toolCallUpdate(),
			Options: []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionAllowOnce, Meta: meta("po")}, {OptionID: "deny", Name: "Deny", Kind: acp.PermissionRejectOnce}}, Meta: meta("rp")}},
		{"request_permission_response_selected", "RequestPermissionResponse", &acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Value: &acp.PermissionSelected{OptionID: "allow", Meta: meta("sel")}}, Meta: meta("rp")}},
		{"request_permission_response_cancelled", "RequestPermissionResponse", &acp.RequestPermissionResponse{Outcome: acp.Cancelled(), Meta: meta("rp")}},
		{"read_text_file_request", "ReadTextFileRequest", &acp.ReadTextFileRequest{SessionID: "s1", Path: "/work/a.go", Line: acp.Ptr(uint32(3)), Limit: acp.Ptr(uint32(10)), Meta: meta("r")}},
		{"read_text_file_response", "ReadTextFileResponse", &acp.ReadTextFileResponse{Content: "package a\n", Meta: meta("r")}},
		{"write_text_file_request", "WriteTextFileRequest", &acp.WriteTextFileRequest{SessionID: "s1", Path: "/work/a.go", Content: "package a\n", Meta: meta("w")}},
		{"write_text_file_response", "WriteTextFileResponse", &acp.WriteTextFileResponse{Meta: meta("w")}},
		{"create_terminal_request", "CreateTerminalRequest", &acp.CreateTerminalRequest{SessionID: "s1", Command: "go", Args: []string{"test", "./..."}, Env: []acp.EnvVariable{{Name: "CGO_ENABLED", Value: "0"}}, Cwd: acp.Ptr("/work"), OutputByteLimit: acp.Ptr(uint64(65536)), Meta: meta("t")}},
		{"create_terminal_response", "CreateTerminalResponse", &acp.CreateTerminalResponse{TerminalID: "term-1", Meta: meta("t")}},
		{"terminal_output_request", "TerminalOutputRequest", &acp.TerminalRequest{SessionID: "s1", TerminalID: "term-1", Meta: meta("t")}},
		{"terminal_output_response", "TerminalOutputResponse", &acp.TerminalOutputResponse{Output: "ok\n", Truncated: true, ExitStatus: &acp.TerminalExitStatus{ExitCode: acp.Ptr(uint32(1)), Signal: acp.Ptr("SIGTERM"), Meta: meta("es")}, Meta: meta("t")}},
		{"wait_for_terminal_exit_request", "WaitForTerminalExitRequest", &acp.TerminalRequest{SessionID: "s1", TerminalID: "term-1", Meta: meta("t")}},
		{"wait_for_terminal_exit_response", "WaitForTerminalExitResponse", &acp.WaitForTerminalExitResponse{ExitCode: acp.Ptr(uint32(0)), Signal: acp.Ptr("SIGKILL"), Meta: meta("t")}},
		{"kill_terminal_request", "KillTerminalRequest", &acp.TerminalRequest{SessionID: "s1", TerminalID: "term-1", Meta: meta("t")}},
		{"kill_terminal_response", "KillTerminalResponse", &acp.KillTerminalResponse{Meta: meta("t")}},
		{"release_terminal_request", "ReleaseTerminalRequest", &acp.TerminalRequest{SessionID: "s1", TerminalID: "term-1", Meta: meta("t")}},
		{"release_terminal_response", "ReleaseTerminalResponse", &acp.ReleaseTerminalResponse{Meta: meta("t")}},
		{"create_elicitation_request_form", "CreateElicitationRequest", &acp.CreateElicitationRequest{Mode: acp.ElicitationModeForm, Message: "Who are you?", SessionID: "s1", ToolCallID: acp.Ptr("call-1"), RequestedSchema: acp.Ptr(elicitationSchema()), Meta: meta("e")}},
		{"create_elicitation_request_url", "CreateElicitationRequest", &acp.CreateElicitationRequest{Mode: acp.ElicitationModeURL, Message: "Log in", RequestID: acp.IntRequestID(3), ElicitationID: "el-1", URL: "https://example.com/login", Meta: meta("e")}},
		{"create_elicitation_response_accept", "CreateElicitationResponse", &acp.CreateElicitationResponse{Action: acp.ElicitationAccept, Content: map[string]json.RawMessage{"count": json.RawMessage(`3`), "name": json.RawMessage(`"a"`), "ok": json.RawMessage(`true`), "tags": json.RawMessage(`["x"]`)}, Meta: meta("e")}},
		{"create_elicitation_response_decline", "CreateElicitationResponse", &acp.CreateElicitationResponse{Action: acp.ElicitationDecline}},
		{"complete_elicitation_notification", "CompleteElicitationNotification", &acp.CompleteElicitationNotification{ElicitationID: "el-1", Meta: meta("e")}},
	}
}

// TestGolden checks each maximal instance against its golden file, validates it against its
// $def in the official schema, and round-trips it (decode → encode gives the same bytes and an
// equal value).
func TestGolden(t *testing.T) {
	var v *acptest.Validator
	if vv, err := acptest.LoadValidator(); err == nil {
		v = vv
	} else {
		t.Logf("schema checks skipped: %v", err)
	}
	seen := map[string]bool{}
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			if seen[g.name] {
				t.Fatalf("duplicate golden %s", g.name)
			}
			seen[g.name] = true
			got, err := json.Marshal(g.value)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", g.name+".json")
			if *update {
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			want = bytes.TrimSpace(want)
			if !bytes.Equal(got, want) {
				t.Errorf("marshal mismatch\n got: %s\nwant: %s", got, want)
			}
			if v != nil {
				if err := v.ValidateDef(g.def, want); err != nil {
					t.Errorf("golden does not satisfy the schema: %v", err)
				}
			}
			back := reflect.New(reflect.TypeOf(g.value).Elem())
			if err := json.Unmarshal(want, back.Interface()); err != nil {
				t.Fatalf("decode: %v", err)
			}
			again, err := json.Marshal(back.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Errorf("round trip changed the bytes\n got: %s\nwant: %s", again, want)
			}
			if !reflect.DeepEqual(normalise(t, back.Interface()), normalise(t, g.value)) {
				t.Errorf("round trip changed the value")
			}
		})
	}
}

// normalise re-encodes x through a generic JSON value, for value comparison.
func normalise(t *testing.T, x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoldenCoversEveryTag fails when a union tag has no golden instance.
func TestGoldenCoversEveryTag(t *testing.T) {
	covered := map[string]bool{}
	for _, g := range goldens() {
		b, _ := json.Marshal(g.value)
		collectTags(b, covered)
	}
	want := []string{
		"type:text", "type:image", "type:audio", "type:resource_link", "type:resource",
		"type:content", "type:diff", "type:terminal",
		"sessionUpdate:user_message_chunk", "sessionUpdate:agent_message_chunk", "sessionUpdate:agent_thought_chunk",
		"sessionUpdate:tool_call", "sessionUpdate:tool_call_update", "sessionUpdate:plan",
		"sessionUpdate:available_commands_update", "sessionUpdate:current_mode_update",
		"sessionUpdate:config_option_update", "sessionUpdate:session_info_update", "sessionUpdate:usage_update",
		"sessionUpdate:notice", "sessionUpdate:compaction_update", "sessionUpdate:compaction_summary_chunk",
		"outcome:selected", "outcome:cancelled", "type:select", "type:boolean", "type:http", "type:sse",
		"type:terminal", "type:string", "type:number", "type:integer", "type:array", "mode:form", "mode:url",
	}
	for _, w := range want {
		if !covered[w] {
			t.Errorf("no golden covers %s", w)
		}
	}
}

func collectTags(b []byte, into map[string]bool) {
	var x any
	_ = json.Unmarshal(b, &x)
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for _, k := range []string{"type", "sessionUpdate", "outcome", "mode"} {
				if s, ok := x[k].(string); ok {
					into[k+":"+s] = true
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(x)
}
