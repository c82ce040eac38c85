package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dsh-tools/dshd/host"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// The test binary doubles as a stdio MCP server: TestMain runs it when the
// environment says so, so the stdio tests talk to a real go-sdk server in
// a real child process.
const serverEnv = "DSHD_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		fmt.Fprintln(os.Stderr, "test server ready")
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if playDaemon != nil {
		playDaemon()
	}
	os.Exit(m.Run())
}

// playDaemon, set where the daemon-death tests exist (group_test.go, Unix),
// makes a child of the test binary play a daemon when asked to.
var playDaemon func()

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	// Raw tools: the server does not validate, so any validation seen by a
	// test is ours.
	s.AddTool(&sdk.Tool{
		Name: "echo", Description: "Echo the raw arguments.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return textResult("got " + string(req.Params.Arguments)), nil
	})
	s.AddTool(&sdk.Tool{Name: "media", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "hi"},
				&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"},
				&sdk.AudioContent{Data: []byte("WAV"), MIMEType: "audio/wav"},
				&sdk.ResourceLink{URI: "file:///x.txt", Name: "x.txt", MIMEType: "text/plain"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///y.txt", MIMEType: "text/plain", Text: "why"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///z.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1}}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := textResult("boom")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"n": 1}}, nil
		})
	// A schema dshd refuses (an external reference): this tool is reported
	// and skipped, the server's others work.
	s.AddTool(&sdk.Tool{Name: "badschema", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("unreachable"), nil
		})
	s.AddTool(&sdk.Tool{Name: "pid", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(&sdk.Tool{Name: "look.up/v2", Title: "Look up", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("found"), nil
		})
	return s
}

type call struct{ name string }

func (c call) ToolName() string           { return c.name }
func (c call) CallID() string             { return "c1" }
func (c call) Arguments() json.RawMessage { return nil }
func (c call) Scope() string              { return "s" }
func (c call) Host() host.Host            { return nil }

func byName(t *testing.T, defs []*registry.Definition, name string) *registry.Definition {
	t.Helper()
	for _, d := range defs {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func execute(t *testing.T, d *registry.Definition, args string) (registry.Result, error) {
	t.Helper()
	return d.Execute(context.Background(), call{d.Name}, json.RawMessage(args))
}

func stdioConfig(name string) ServerConfig {
	return ServerConfig{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{serverEnv: "1"}}
}

func TestStdioServer(t *testing.T) {
	stderr := &testsupport.SyncBuffer{}
	servers, errs := Connect(context.Background(), []ServerConfig{
		stdioConfig("good"),
		{Name: "broken", Command: "/nonexistent/mcp-server"},
		{Name: "nothing"},
	}, Options{Stderr: stderr, Dir: t.TempDir()})
	defer servers.Close()

	var failed []string
	for _, err := range errs {
		var se *ServerError
		if !errors.As(err, &se) {
			t.Fatalf("error %v is not a *ServerError", err)
		}
		failed = append(failed, se.Server)
	}
	if !slices.Equal(failed, []string{"good", "broken", "nothing"}) || !strings.Contains(errs[0].Error(), "badschema") {
		t.Fatalf("errors %v, want good's badschema, broken and nothing", errs)
	}
	defs := servers.Tools()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	want := []string{"mcp__good__echo", "mcp__good__fail", "mcp__good__look_up_v2", "mcp__good__media", "mcp__good__pid", "mcp__good__structured"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	testTools(t, defs, "good")

	pidRes, err := execute(t, byName(t, defs, "mcp__good__pid"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(pidRes.Content[0].Text)
	if !strings.Contains(stderr.String(), "test server ready") {
		t.Errorf("server stderr not forwarded: %q", stderr.String())
	}
	if err := servers.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if processExists(pid) {
		t.Errorf("server process %d still exists after Close", pid)
	}
	if _, err := execute(t, byName(t, defs, "mcp__good__echo"), `{"text":"x"}`); err == nil {
		t.Error("call after Close succeeded")
	}
}

// testTools checks the tools of the test server, whatever the transport.
func testTools(t *testing.T, defs []*registry.Definition, server string) {
	echo := byName(t, defs, "mcp__"+server+"__echo")
	if !json.Valid(echo.Parameters) || !strings.Contains(string(echo.Parameters), `"required":["text"]`) {
		t.Errorf("schema not passed through: %s", echo.Parameters)
	}
	if !strings.HasPrefix(echo.Description, "Echo the raw arguments.") {
		t.Errorf("description %q", echo.Description)
	}
	r, err := execute(t, echo, `{"text":"hello"}`)
	if err != nil || r.Content[0].Text != `got {"text":"hello"}` {
		t.Errorf("echo: %+v %v", r, err)
	}
	// Enforced before dispatch: the raw server would have echoed these.
	// ValidateArgs (what the pipeline runs before policy) agrees.
	if err := echo.ValidateArgs(json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("ValidateArgs of valid arguments: %v", err)
	}
	for _, bad := range []string{`{}`, `{"text":1}`, `{"text":"x","extra":true}`, `[1]`, `{`} {
		var pre *registry.ToolArgsError
		if err := echo.ValidateArgs(json.RawMessage(bad)); !errors.As(err, &pre) || pre.Tool != echo.Name {
			t.Errorf("ValidateArgs(%s): %v, want a ToolArgsError", bad, err)
		}
		_, err := execute(t, echo, bad)
		var ae *registry.ToolArgsError
		if !errors.As(err, &ae) || ae.Tool != echo.Name {
			t.Errorf("echo(%s): err %v, want a ToolArgsError", bad, err)
		}
	}
	r, err = execute(t, byName(t, defs, "mcp__"+server+"__media"), ``)
	if err != nil {
		t.Fatal(err)
	}
	wantMedia := []presentation.Content{
		presentation.Text("hi"),
		{Type: presentation.ContentImage, Data: "UE5H", MIMEType: "image/png"},
		{Type: presentation.ContentAudio, Data: "V0FW", MIMEType: "audio/wav"},
		{Type: presentation.ContentResourceLink, URI: "file:///x.txt", Name: "x.txt", MIMEType: "text/plain"},
		{Type: presentation.ContentResource, URI: "file:///y.txt", MIMEType: "text/plain", Text: "why"},
		{Type: presentation.ContentResource, URI: "file:///z.bin", MIMEType: "application/octet-stream", Data: "AAE="},
	}
	if !slices.Equal(r.Content, wantMedia) {
		t.Errorf("media\n%+v\nwant\n%+v", r.Content, wantMedia)
	}
	r, _ = execute(t, byName(t, defs, "mcp__"+server+"__fail"), `{}`)
	if !r.IsError || r.Error.Message != "boom" {
		t.Errorf("fail: %+v", r)
	}
	r, _ = execute(t, byName(t, defs, "mcp__"+server+"__structured"), `{}`)
	if string(r.Structured) != `{"n":1}` || r.Content[0].Text != `{"n":1}` {
		t.Errorf("structured: %+v", r)
	}
	look := byName(t, defs, "mcp__"+server+"__look_up_v2")
	// readOnlyHint is a display hint (issue 14, finding 5): the kind modes
	// judge stays mutating; only the card shows a read.
	if look.Kind != presentation.KindOther || !look.ReadOnlyHint || look.PresentCall(nil).Kind != presentation.KindRead {
		t.Errorf("look.up: kind %q, hint %v, shown as %q; want other, true, read", look.Kind, look.ReadOnlyHint, look.PresentCall(nil).Kind)
	}
	if look.Title != "Look up" {
		t.Errorf("annotations: kind %q title %q", look.Kind, look.Title)
	}
	if v := look.PresentCall(call{look.Name}); v.Title != server+": Look up" {
		t.Errorf("call view %+v", v)
	}
}

func TestHTTPServer(t *testing.T) {
	srv := testServer()
	var mu sync.Mutex
	var auth []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	servers, errs := Connect(context.Background(), []ServerConfig{
		{Name: "web", Type: TypeHTTP, URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer t0k"}},
		{Name: "down", URL: "http://127.0.0.1:1/mcp"},
	}, Options{Timeout: 10 * time.Second})
	defer servers.Close()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "badschema") || !strings.Contains(errs[1].Error(), `"down"`) {
		t.Fatalf("errors %v, want web's badschema and down", errs)
	}
	testTools(t, servers.Tools(), "web")
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer t0k" {
		t.Errorf("headers not sent: %q", auth)
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my server", "do.thing/v2", "mcp__my_server__do_thing_v2"},
		{"é", "ü", "mcp______"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	long1 := ToolName(strings.Repeat("s", 40), strings.Repeat("t", 40)+"a")
	long2 := ToolName(strings.Repeat("s", 40), strings.Repeat("t", 40)+"b")
	if len(long1) != 64 || long1 == long2 {
		t.Errorf("long names %q %q", long1, long2)
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("server", "tool")
	f.Add("a b/c", "δ.ε")
	f.Fuzz(func(t *testing.T, server, tool string) {
		name := ToolName(server, tool)
		if len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("ToolName(%q, %q) = %q", server, tool, name)
		}
	})
}

// A server whose tool list changes is listed again, and the merged list
// reaches OnToolsChanged: added tools appear, removed ones go.
func TestToolsChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "1"}, nil)
	addTool := func(name string) {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return textResult(name), nil })
	}
	addTool("first")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()

	lists := make(chan []string, 16)
	servers, errs := Connect(context.Background(), []ServerConfig{{Name: "live", URL: ts.URL}}, Options{
		Timeout: 10 * time.Second,
		OnToolsChanged: func(tools []*registry.Definition, failures []error) {
			if len(failures) > 0 {
				t.Errorf("failures %v", failures)
			}
			var names []string
			for _, d := range tools {
				names = append(names, d.Name)
			}
			slices.Sort(names)
			lists <- names
		},
	})
	defer servers.Close()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	waitFor := func(want ...string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case got := <-lists:
				if slices.Equal(got, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no tool list %v arrived", want)
			}
		}
	}
	addTool("second")
	waitFor("mcp__live__first", "mcp__live__second")
	srv.RemoveTools("first")
	waitFor("mcp__live__second")
	r, err := execute(t, byName(t, servers.Tools(), "mcp__live__second"), `{}`)
	if err != nil || r.Content[0].Text != "second" {
		t.Errorf("the new tool: %+v %v", r, err)
	}
	if err := servers.Close(); err != nil {
		t.Fatal(err)
	}
}
