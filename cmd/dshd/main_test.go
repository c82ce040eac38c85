package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// binary is the dshd built once for this package's tests.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testsupport.MainWithBinary(m, "./cmd/dshd", &binary))
}

// process is a running dshd with a test client on its pipes.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *acptest.Client
	conn   *acp.AgentConn
	stderr *strings.Builder
}

// start runs the built binary in cwd with an empty user configuration.
func start(t *testing.T, cwd string, args ...string) *process {
	t.Helper()
	return startWith(t, cwd, &acptest.Client{Permission: acptest.AllowOnce}, args...)
}

// startWith is start with a client of the caller's (say, with terminals).
func startWith(t *testing.T, cwd string, client *acptest.Client, args ...string) *process {
	t.Helper()
	return startClientEnv(t, cwd, client, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, args...)
}

// startEnv is start with env added to the environment (later entries win).
func startEnv(t *testing.T, cwd string, env []string, args ...string) *process {
	t.Helper()
	return startClientEnv(t, cwd, &acptest.Client{Permission: acptest.AllowOnce}, env, args...)
}

// startClientEnv is start with both a client and environment of the caller's.
func startClientEnv(t *testing.T, cwd string, client *acptest.Client, env []string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.Command(binary, args...)
	cmd.Dir = cwd
	cmd.Env = append(append(os.Environ(), "DSHD_PROVIDER=", "DSHD_MODEL=", "DSHD_SCRIPT=", "DSHD_CONFIG="), env...)
	p := &process{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.client = client
	p.conn = p.client.Serve(ctx, pipes{ReadCloser: stdout, w: p.stdin})
	t.Cleanup(func() {
		cancel()
		_ = p.stdin.Close()
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("dshd stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// stop closes stdin and waits for the daemon to exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("dshd exited with %v after stdin EOF", err)
	}
}

type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error                { _ = p.w.Close(); return p.ReadCloser.Close() }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openSession initializes conn, sending caps (nil: none), and opens a
// session in cwd.
func openSession(t *testing.T, ctx context.Context, conn *acp.AgentConn, cwd string, caps *acp.ClientCapabilities) *acp.NewSessionResponse {
	t.Helper()
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// sendPrompt sends text as a prompt of session; an error fails the test.
func sendPrompt(t *testing.T, ctx context.Context, conn *acp.AgentConn, session, text string) {
	t.Helper()
	if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: session, Prompt: []acp.ContentBlock{acp.Text(text)}}); err != nil {
		t.Fatal(err)
	}
}

func TestDemoOverRealPipes(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	ctx := testContext(t)
	state := t.TempDir()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, cwd, "--state-dir", state)
	init, err := p.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if !init.AgentCapabilities.LoadSession || init.AgentInfo == nil || init.AgentInfo.Name != "dshd" {
		t.Errorf("initialize response %+v", init)
	}
	sess, err := p.conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := p.conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text("Show me the demo")}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	if resp.StopReason != acp.StopEndTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	kinds := map[acp.ToolKind]bool{}
	var plans, diffs, asks int
	for _, n := range p.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.ToolCall:
			kinds[u.Kind] = true
		case *acp.Plan:
			plans++
		case *acp.ToolCallUpdate:
			for _, c := range u.Content {
				if _, ok := c.Value.(*acp.ToolCallDiff); ok && u.Status != nil && *u.Status == acp.ToolCallCompleted {
					diffs++
				}
			}
		}
	}
	for _, e := range p.client.Recorder.Entries() {
		if e.Dir == acptest.AgentToClient && strings.Contains(string(e.Msg), `"session/request_permission"`) {
			asks++
		}
	}
	if !kinds[acp.ToolKindRead] || !kinds[acp.ToolKindEdit] || !kinds[acp.ToolKindExecute] || plans == 0 || diffs == 0 || asks == 0 {
		t.Errorf("kinds %v, plans %d, completed diffs %d, permission requests %d", kinds, plans, diffs, asks)
	}
	// The demo's command succeeds: its card shows its output and no exit
	// status (a stray kill of the command once showed "Killed by signal").
	for _, e := range p.client.Recorder.Entries() {
		if msg := string(e.Msg); e.Dir == acptest.AgentToClient && (strings.Contains(strings.ToLower(msg), "killed by") || strings.Contains(strings.ToLower(msg), "exit code")) {
			t.Errorf("the demo's command did not end cleanly: %s", msg)
		}
	}
	if data, err := os.ReadFile(filepath.Join(cwd, "dshd-demo.txt")); err != nil || !strings.Contains(string(data), "edited by dshd") {
		t.Errorf("the demo's edit is not on disk: %q %v", data, err)
	}
	if err := p.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	// A second daemon on the same state directory lists and loads it.
	q := start(t, cwd, "--state-dir", state)
	if _, err := q.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	list, err := q.conn.ListSessions(ctx, &acp.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionID != sess.SessionID {
		t.Fatalf("session/list = %+v, %v", list, err)
	}
	if _, err := q.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sess.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if len(q.client.Updates()) == 0 {
		t.Error("session/load replayed nothing")
	}
	if err := q.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	q.stop(t)
}

func TestExitsOnSIGTERM(t *testing.T) {
	ctx := testContext(t)
	p := start(t, t.TempDir(), "--state-dir", t.TempDir(), "--log-level", "info")
	if _, err := p.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	if !strings.Contains(p.stderr.String(), "dshd stopped") {
		t.Errorf("stderr lacks the shutdown log:\n%s", p.stderr.String())
	}
}

func TestBadSettingsFileRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(cfg, []byte("{\n  \"permissions\": {\"deny\": [\"bash(\"]}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--config", cfg, "--state-dir", dir)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("dshd started on an invalid settings file")
	}
	if !strings.Contains(string(out), cfg+":2:") {
		t.Errorf("error does not point at the line: %s", out)
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, err := exec.Command(binary, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "dshd ") {
		t.Errorf("--version: %q %v", out, err)
	}
	out, err = exec.Command(binary, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--provider", "--model", "--base-url", "--api-key-env", "--script", "--config", "--state-dir", "--log-level", "--version", "--help", "DSHD_PROVIDER", "DSHD_STATE_DIR", "XDG_CONFIG_HOME"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help lacks %s", want)
		}
	}
}

// TestHealthyStartIsQuiet: some clients (agent-shell) show every stderr
// chunk as a notice, so a healthy start, a session and a turn write
// nothing there by default; --log-level info still says "dshd ready".
func TestHealthyStartIsQuiet(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // "" : stderr stays empty
	}{
		{name: "default", args: nil},
		{name: "info", args: []string{"--log-level", "info"}, want: "dshd ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			cwd := t.TempDir()
			p := start(t, cwd, append([]string{"--state-dir", t.TempDir()}, tc.args...)...)
			sess := openSession(t, ctx, p.conn, cwd, &acp.ClientCapabilities{})
			sendPrompt(t, ctx, p.conn, sess.SessionID, "hello")
			p.stop(t)
			got := p.stderr.String()
			if tc.want == "" && got != "" {
				t.Errorf("stderr of a healthy run is not empty:\n%s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("stderr %q does not say %q", got, tc.want)
			}
		})
	}
}

// TestScriptContinuesAfterResume: a session continued in another daemon
// (CodeCompanion's /resume: session/resume, or session/load, then a
// prompt) gets the script's next unused turn, not "the script is
// exhausted".
func TestScriptContinuesAfterResume(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"responses": [{"text": "one"}]},
		{"responses": [{"text": "two"}]},
		{"responses": [{"text": "three"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"resume", "load"} {
		t.Run(how, func(t *testing.T) {
			args := []string{"--script", script}
			ctx := testContext(t)
			state, cwd := t.TempDir(), t.TempDir()
			reply := func(p *process, sid, text string) string {
				t.Helper()
				before := len(p.client.Updates())
				sendPrompt(t, ctx, p.conn, sid, text)
				var b strings.Builder
				for _, n := range p.client.Updates()[before:] {
					if c, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
						if tc, ok := c.Content.Value.(*acp.TextContent); ok {
							b.WriteString(tc.Text)
						}
					}
				}
				return b.String()
			}
			p := start(t, cwd, append([]string{"--state-dir", state}, args...)...)
			sess := openSession(t, ctx, p.conn, cwd, nil)
			if got := reply(p, sess.SessionID, "first"); got != "one" {
				t.Fatalf("first reply %q", got)
			}
			p.stop(t)

			q := start(t, cwd, append([]string{"--state-dir", state}, args...)...)
			if _, err := q.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
				t.Fatal(err)
			}
			var err error
			if how == "resume" {
				_, err = q.conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: sess.SessionID, Cwd: cwd})
			} else {
				_, err = q.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sess.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reply(q, sess.SessionID, "second"); got != "two" {
				t.Errorf("reply after %s %q, want the script's next turn %q", how, got, "two")
			}
			if got := reply(q, sess.SessionID, "third"); got != "three" {
				t.Errorf("next reply %q, want %q", got, "three")
			}
			q.stop(t)
		})
	}
}

// TestSessionHasOneWriter: two daemons on one state directory (a client
// that starts one per chat): while the first holds a session, the second's
// session/load and session/resume are refused with an error saying why;
// once the first is killed (kill -9: the kernel drops its lock) the second
// loads it.
func TestSessionHasOneWriter(t *testing.T) {
	ctx := testContext(t)
	state, cwd := t.TempDir(), t.TempDir()
	p := start(t, cwd, "--state-dir", state)
	sess := openSession(t, ctx, p.conn, cwd, nil)
	q := start(t, cwd, "--state-dir", state)
	if _, err := q.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	_, loadErr := q.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sess.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}})
	_, resumeErr := q.conn.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: sess.SessionID, Cwd: cwd})
	for name, err := range map[string]error{"load": loadErr, "resume": resumeErr} {
		var ae *acp.Error
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidRequest || !strings.Contains(ae.Message, "open in another dshd process") {
			t.Errorf("session/%s of a session held by another daemon: %v, want an invalid-request error saying so", name, err)
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	if _, err := q.conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sess.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatalf("session/load after the holder was killed: %v", err)
	}
	acptest.CheckSchema(t, q.client.Recorder)
	q.stop(t)
}

// TestReadCardThroughTheBinary: the read tool's card follows the file (an
// absolute location on the announcement, the permission-free read) and
// shows its text as a code block of its language, not the model's
// line-numbered form.
func TestReadCardThroughTheBinary(t *testing.T) {
	ctx := testContext(t)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# Scratch\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [{"responses": [
		{"toolCalls": [{"id": "r1", "name": "read", "arguments": {"path": "README.md"}}]},
		{"text": "done"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, cwd, "--state-dir", t.TempDir(), "--script", script)
	sess := openSession(t, ctx, p.conn, cwd, &acp.ClientCapabilities{})
	sendPrompt(t, ctx, p.conn, sess.SessionID, "read it")
	var announced *acp.ToolCall
	var final *acp.ToolCallUpdate
	for _, n := range p.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.ToolCall:
			announced = u
		case *acp.ToolCallUpdate:
			if u.Status != nil && *u.Status == acp.ToolCallCompleted {
				final = u
			}
		}
	}
	if announced == nil || announced.Kind != acp.ToolKindRead || len(announced.Locations) != 1 || announced.Locations[0].Path != filepath.Join(cwd, "README.md") {
		t.Errorf("announced %+v, want a read card located at README.md", announced)
	}
	if final == nil || len(final.Content) == 0 {
		t.Fatalf("final update %+v", final)
	}
	block, _ := final.Content[0].Value.(*acp.ToolCallContentBlock)
	if text, _ := block.Content.Value.(*acp.TextContent); text == nil || text.Text != "```markdown\n# Scratch\nhello\n```" {
		t.Errorf("read card shows %+v, want the file as a markdown block", final.Content[0].Value)
	}
	acptest.CheckSchema(t, p.client.Recorder)
	p.stop(t)
}

// TestEditorTerminalCommandLongerThanCleanupDeadline: a command that runs
// 6 s in a real editor terminal (acptest's ExecTerminals runs it) returns
// its output to the model and its terminal is released; the clean-up
// deadline (5 s) once started at terminal/create and expired while the
// command ran. (bridge's synctest test covers 20 s and a timeout kill on a
// fake clock; this one is real time, once.)
func TestEditorTerminalCommandLongerThanCleanupDeadline(t *testing.T) {
	ctx := testContext(t)
	cwd := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [{"responses": [
		{"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": "sleep 6; echo six-done"}}]},
		{"text": "done"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	terms := &acptest.ExecTerminals{}
	p := startWith(t, cwd, &acptest.Client{Permission: acptest.AllowOnce, Terminals: terms}, "--state-dir", t.TempDir(), "--script", script)
	sess := openSession(t, ctx, p.conn, cwd, &acp.ClientCapabilities{Terminal: true})
	sendPrompt(t, ctx, p.conn, sess.SessionID, "run it")
	var final *acp.ToolCallUpdate
	for _, n := range p.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.Status != nil && (*u.Status == acp.ToolCallCompleted || *u.Status == acp.ToolCallFailed) {
			final = u
		}
	}
	if final == nil || *final.Status != acp.ToolCallCompleted {
		t.Fatalf("final update %+v", final)
	}
	// rawOutput is the result; its content is what the model got.
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(final.RawOutput, &res); err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "six-done") {
		t.Errorf("the model got %s, not the command's output", final.RawOutput)
	}
	if created, released := terms.Created(), terms.Released(); len(created) != 1 || len(released) != 1 || created[0] != released[0] {
		t.Errorf("terminals created %v, released %v", created, released)
	}
	acptest.CheckSchema(t, p.client.Recorder)
	p.stop(t)
}
