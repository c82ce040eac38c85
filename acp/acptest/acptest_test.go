package acptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

func TestSchemaPathEnv(t *testing.T) {
	t.Setenv("ACP_SCHEMA", filepath.Join(t.TempDir(), "missing.json"))
	if _, err := acptest.SchemaPath(); !errors.Is(err, acptest.ErrNoSchema) {
		t.Fatalf("err %v, want ErrNoSchema", err)
	}
}

// TestSchemaPathInterop: with no $ACP_SCHEMA and no ../shared beside the clone, the schema is
// found in the official SDK that `make interop` installs under interop/node_modules.
func TestSchemaPathInterop(t *testing.T) {
	root := filepath.Join(t.TempDir(), "clone")
	want := filepath.Join(root, "interop", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
	sub := filepath.Join(root, "acp", "acptest")
	for _, dir := range []string{filepath.Dir(want), sub} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/clone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte("{}"), 0o644); err != nil { // a stand-in: only the path matters
		t.Fatal(err)
	}
	t.Setenv("ACP_SCHEMA", "")
	t.Chdir(sub)
	got, err := acptest.SchemaPath()
	if err != nil || got != want {
		t.Fatalf("SchemaPath() = %q, %v; want %q", got, err, want)
	}
}

// fakeTB records how SchemaOrSkip ends a test; Skipf and Fatalf stop it by panicking.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (f *fakeTB) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	panic(stopped{})
}

// TestSchemaRequired: without the schema SchemaOrSkip skips, unless ACP_SCHEMA_REQUIRED=1
// (as in CI), where it fails the test with the same message.
func TestSchemaRequired(t *testing.T) {
	t.Setenv("ACP_SCHEMA", filepath.Join(t.TempDir(), "missing.json"))
	for _, tc := range []struct {
		required string
		fail     bool
	}{{"", false}, {"0", false}, {"1", true}} {
		t.Run("ACP_SCHEMA_REQUIRED="+tc.required, func(t *testing.T) {
			t.Setenv("ACP_SCHEMA_REQUIRED", tc.required)
			f := &fakeTB{TB: t}
			func() {
				defer func() {
					if p := recover(); p != nil && p != (stopped{}) {
						panic(p)
					}
				}()
				acptest.SchemaOrSkip(f)
			}()
			switch {
			case tc.fail && (f.failed == "" || f.skipped != ""):
				t.Errorf("skipped %q, failed %q; want a failure", f.skipped, f.failed)
			case !tc.fail && (f.skipped == "" || f.failed != ""):
				t.Errorf("skipped %q, failed %q; want a skip", f.skipped, f.failed)
			}
			for _, msg := range []string{f.skipped, f.failed} {
				if msg != "" && !strings.Contains(msg, "ACP schema not found") {
					t.Errorf("message %q does not say why", msg)
				}
			}
		})
	}
}

func TestValidateMessage(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	tests := []struct {
		name      string
		msg       string
		fromAgent bool
		method    string
		ok        bool
	}{
		{"update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, true, "", true},
		{"bad content type", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"txt","text":"hi"}}}}`, true, "", false},
		{"update without params fields", `{"jsonrpc":"2.0","method":"session/update","params":{"foo":1}}`, true, "", false},
		{"prompt result", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, true, acp.MethodSessionPrompt, true},
		{"bad prompt result", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"error"}}`, true, acp.MethodSessionPrompt, false},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`, true, acp.MethodSessionNew, true},
		{"bad error response", `{"jsonrpc":"2.0","id":3,"error":{"message":"bad"}}`, true, acp.MethodSessionNew, false},
		{"extension request", `{"jsonrpc":"2.0","id":4,"method":"_x/y","params":{"anything":1}}`, true, "", true},
		{"permission request", `{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}}`, true, "", true},
		{"client permission result", `{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"cancelled"}}}`, false, acp.MethodSessionRequestPermission, true},
		{"client initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1"}}`, false, "", false},
		{"missing jsonrpc", `{"id":1,"result":{}}`, true, acp.MethodSessionLoad, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.ValidateMessage([]byte(tc.msg), tc.fromAgent, tc.method)
			if (err == nil) != tc.ok {
				t.Errorf("ValidateMessage = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// toolAgent exercises every client service from one prompt turn.
type toolAgent struct {
	conn *acp.ClientConn
	root string
	log  []string
}

func (a *toolAgent) routes(cc *acp.ClientConn) acp.Router {
	a.conn = cc
	return acp.Router{
		acp.MethodInitialize:    acp.StagedRoute(a.Initialize),
		acp.MethodSessionNew:    acp.StagedRoute(a.NewSession),
		acp.MethodSessionPrompt: acp.StagedRoute(a.Prompt),
	}
}

func (a *toolAgent) Initialize(context.Context, *acp.InitializeRequest) (acp.Reply[acp.InitializeResponse], error) {
	return acp.Now(&acp.InitializeResponse{ProtocolVersion: 1}), nil
}

func (a *toolAgent) NewSession(context.Context, *acp.NewSessionRequest) (acp.Reply[acp.NewSessionResponse], error) {
	return acp.Now(&acp.NewSessionResponse{SessionID: "s1"}), nil
}

func (a *toolAgent) Prompt(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
	return acp.Later(func() (*acp.PromptResponse, error) {
		sid := req.SessionID
		path := filepath.Join(a.root, "notes.txt")
		perm, err := a.conn.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: sid,
			ToolCall: acp.ToolCallUpdate{ToolCallID: "c1", Title: acp.Ptr("Write notes")},
			Options:  []acp.PermissionOption{{OptionID: "no", Name: "No", Kind: acp.PermissionRejectOnce}, {OptionID: "yes", Name: "Yes", Kind: acp.PermissionAllowOnce}}})
		if err != nil {
			return nil, err
		}
		opt, _ := perm.Outcome.SelectedOption()
		a.log = append(a.log, "permission:"+opt)
		if _, err := a.conn.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: sid, Path: path, Content: "one\ntwo\nthree\n"}); err != nil {
			return nil, err
		}
		got, err := a.conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: sid, Path: path, Line: acp.Ptr(uint32(2)), Limit: acp.Ptr(uint32(1))})
		if err != nil {
			return nil, err
		}
		a.log = append(a.log, "read:"+got.Content)
		_, err = a.conn.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: sid, Path: filepath.Join(a.root, "missing")})
		a.log = append(a.log, "missing:"+boolString(errors.Is(err, acp.ErrResourceNotFound)))
		term, err := a.conn.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: sid, Command: "sh", Args: []string{"-c", "echo out; echo err >&2; exit 3"}, Cwd: acp.Ptr(a.root)})
		if err != nil {
			return nil, err
		}
		tr := &acp.TerminalRequest{SessionID: sid, TerminalID: term.TerminalID}
		exit, err := a.conn.WaitForTerminalExit(ctx, tr)
		if err != nil {
			return nil, err
		}
		out, err := a.conn.TerminalOutput(ctx, tr)
		if err != nil {
			return nil, err
		}
		a.log = append(a.log, "exit:"+string(rune('0'+*exit.ExitCode)), "output:"+out.Output)
		if err := a.conn.SessionUpdate(ctx, &acp.SessionNotification{SessionID: sid, Update: acp.Update(&acp.ToolCall{ToolCallID: "c1", Title: "Run", Content: []acp.ToolCallContent{acp.Terminal(term.TerminalID)}})}); err != nil {
			return nil, err
		}
		if _, err := a.conn.ReleaseTerminal(ctx, tr); err != nil {
			return nil, err
		}
		return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	}), nil
}

func boolString(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func TestClientServesEverything(t *testing.T) {
	root := t.TempDir()
	terms := &acptest.ExecTerminals{}
	c := &acptest.Client{Permission: acptest.AllowOnce, FS: acptest.DirFS{Root: root}, Terminals: terms}
	a := &toolAgent{root: root}
	conn := acptest.Connect(t, c, a.routes)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{FS: &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: root}); err != nil {
		t.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	want := []string{"permission:yes", "read:two\n", "missing:yes", "exit:3", "output:out\nerr\n"}
	if strings.Join(a.log, "|") != strings.Join(want, "|") {
		t.Errorf("agent saw %q, want %q", a.log, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("file content %q", b)
	}
	if len(terms.Created()) != 1 || len(terms.Released()) != 1 {
		t.Errorf("terminals created %v released %v", terms.Created(), terms.Released())
	}
	if n := len(c.Updates()); n != 1 {
		t.Errorf("%d updates, want 1", n)
	}
	// The transcript is in the fixture envelope and every message satisfies the schema.
	var buf bytes.Buffer
	if err := c.Recorder.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first acptest.Entry
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Dir != acptest.ClientToAgent || !strings.Contains(string(first.Msg), `"initialize"`) {
		t.Errorf("first entry %s (%v)", lines[0], err)
	}
	if len(lines) < 20 {
		t.Errorf("only %d messages recorded", len(lines))
	}
	acptest.CheckSchema(t, c.Recorder)
}

func TestPermissionPolicies(t *testing.T) {
	req := &acp.RequestPermissionRequest{Options: []acp.PermissionOption{
		{OptionID: "ra", Kind: acp.PermissionRejectAlways}, {OptionID: "ao", Kind: acp.PermissionAllowOnce},
		{OptionID: "aa", Kind: acp.PermissionAllowAlways}, {OptionID: "ro", Kind: acp.PermissionRejectOnce},
	}}
	ctx := context.Background()
	for name, tc := range map[string]struct {
		p    acptest.PermissionPolicy
		want string
	}{
		"allow once":   {acptest.AllowOnce, "ao"},
		"allow always": {acptest.AllowAlways, "aa"},
		"reject once":  {acptest.RejectOnce, "ro"},
		"cancel":       {acptest.CancelPermission, ""},
	} {
		got, _ := tc.p(ctx, req).SelectedOption()
		if got != tc.want {
			t.Errorf("%s: picked %q, want %q", name, got, tc.want)
		}
	}
}

func TestFakeTerminals(t *testing.T) {
	f := &acptest.FakeTerminals{Script: map[string]acptest.FakeRun{
		"build": {Output: "héllo wörld\n", ExitCode: 2},
		"serve": {Output: "listening\n", Hang: true},
	}}
	ctx := context.Background()
	b, _ := f.Create(ctx, &acp.CreateTerminalRequest{Command: "build", OutputByteLimit: acp.Ptr(uint64(7))})
	out, _ := f.Output(ctx, &acp.TerminalRequest{TerminalID: b.TerminalID})
	if !out.Truncated || out.Output != "wörld\n" || out.ExitStatus == nil || *out.ExitStatus.ExitCode != 2 {
		t.Errorf("truncated output %+v", out)
	}
	s, _ := f.Create(ctx, &acp.CreateTerminalRequest{Command: "serve"})
	if out, _ := f.Output(ctx, &acp.TerminalRequest{TerminalID: s.TerminalID}); out.ExitStatus != nil {
		t.Errorf("hanging command already exited: %+v", out.ExitStatus)
	}
	if _, err := f.Kill(ctx, &acp.TerminalRequest{TerminalID: s.TerminalID}); err != nil {
		t.Fatal(err)
	}
	w, _ := f.WaitForExit(ctx, &acp.TerminalRequest{TerminalID: s.TerminalID})
	if w.Signal == nil || *w.Signal != "SIGKILL" {
		t.Errorf("killed command exit %+v", w)
	}
	if _, err := f.Release(ctx, &acp.TerminalRequest{TerminalID: s.TerminalID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Output(ctx, &acp.TerminalRequest{TerminalID: s.TerminalID}); !errors.Is(err, acp.ErrInvalidParams) {
		t.Errorf("output after release: %v", err)
	}
	u, _ := f.Create(ctx, &acp.CreateTerminalRequest{Command: "nope"})
	if w, _ := f.WaitForExit(ctx, &acp.TerminalRequest{TerminalID: u.TerminalID}); *w.ExitCode != 127 {
		t.Errorf("unknown command exit %+v", w)
	}
}

func TestDirFSRejectsOutsideRoot(t *testing.T) {
	d := acptest.DirFS{Root: t.TempDir()}
	if _, err := d.ReadFile(context.Background(), "/etc/passwd"); !errors.Is(err, acp.ErrInvalidParams) {
		t.Errorf("read outside root: %v", err)
	}
	if err := d.WriteFile(context.Background(), "relative.txt", "x"); !errors.Is(err, acp.ErrInvalidParams) {
		t.Errorf("relative write: %v", err)
	}
}

func TestMemFS(t *testing.T) {
	m := acptest.NewMemFS(map[string]string{"/a": "1"})
	ctx := context.Background()
	if err := m.WriteFile(ctx, "/b", "2"); err != nil {
		t.Fatal(err)
	}
	if s, ok := m.File("/b"); !ok || s != "2" || len(m.Writes()) != 1 {
		t.Errorf("MemFS after write: %q %v %v", s, ok, m.Writes())
	}
	if _, err := m.ReadFile(ctx, "/c"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
