//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/sandbox"
)

// TestCommandsAreSandboxedThroughTheBinary: through the real binary, a
// foreground command, a background job and a command in an editor
// terminal (the acptest terminal host, which runs what terminal/create
// names) all run in the sandbox: they cannot write outside the workspace
// nor .git/config, even with a computed path that the text guard cannot
// read, while writing the workspace works.
func TestCommandsAreSandboxedThroughTheBinary(t *testing.T) {
	if a := sandbox.Probe(); !a.Available() && os.Getenv("DSHD_SANDBOX_TESTS") == "skip" {
		t.Skip("DSHD_SANDBOX_TESTS=skip")
	}
	outside := testsupport.OutsideSandbox(t)
	// The paths are computed by printf from octal escapes, so that the
	// protected-path text guard cannot see them.
	octal := func(s string) string {
		var sb strings.Builder
		for _, b := range []byte(s) {
			fmt.Fprintf(&sb, `\%03o`, b)
		}
		return sb.String()
	}
	attack := func(tag string) string {
		return fmt.Sprintf(`echo ok > made-%[1]s; echo pwned > "$(printf '%[2]s')"; echo pwned >> "$(printf '%[3]s')"; echo done-%[1]s`,
			tag, octal(filepath.Join(outside, tag)), octal(".git/config"))
	}
	script := map[string]any{"turns": []any{
		map[string]any{"match": "fg", "responses": []any{
			map[string]any{"toolCalls": []any{map[string]any{"id": "fg1", "name": "bash", "arguments": map[string]any{"command": attack("fg")}}}},
			map[string]any{"text": "ok"}}},
		map[string]any{"match": "bg", "responses": []any{
			map[string]any{"toolCalls": []any{map[string]any{"id": "bg1", "name": "bash", "arguments": map[string]any{"command": attack("bg"), "runInBackground": true}}}},
			map[string]any{"toolCalls": []any{map[string]any{"id": "bg2", "name": "bash_output", "arguments": map[string]any{"id": "bash_1", "wait": 60}}}},
			map[string]any{"text": "ok"}}},
		map[string]any{"match": "term", "responses": []any{
			map[string]any{"toolCalls": []any{map[string]any{"id": "tm1", "name": "bash", "arguments": map[string]any{"command": attack("term")}}}},
			map[string]any{"text": "ok"}}},
	}}
	raw, _ := json.Marshal(script)
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ prompt, callID string }{{"fg", "fg1"}, {"bg", "bg2"}, {"term", "tm1"}} {
		t.Run(tc.prompt, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.MkdirAll(filepath.Join(cwd, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := start(t, cwd, "--script", scriptFile, "--state-dir", t.TempDir())
			caps := acp.ClientCapabilities{}
			terms := &acptest.ExecTerminals{}
			if tc.prompt == "term" {
				p.client.Terminals = terms
				caps.Terminal = true
			}
			ctx := testContext(t)
			sess := openSession(t, ctx, p.conn, cwd, &caps)
			sendPrompt(t, ctx, p.conn, sess.SessionID, tc.prompt)
			out := lastRawOutput(p.client, tc.callID)
			if !strings.Contains(out, "done-"+tc.prompt) {
				t.Fatalf("the command did not run to its end: %s", out)
			}
			if b, err := os.ReadFile(filepath.Join(cwd, "made-"+tc.prompt)); err != nil || string(b) != "ok\n" {
				t.Errorf("the workspace write failed: %v", err)
			}
			if _, err := os.Stat(filepath.Join(outside, tc.prompt)); err == nil {
				t.Errorf("the command wrote outside the workspace: %s", out)
			}
			if b, _ := os.ReadFile(filepath.Join(cwd, ".git", "config")); string(b) != "[core]\n" {
				t.Errorf(".git/config is now %q", b)
			}
			if tc.prompt == "term" {
				var created *acp.CreateTerminalRequest
				for _, e := range p.client.Recorder.Entries() {
					var m struct {
						Method string                    `json:"method"`
						Params acp.CreateTerminalRequest `json:"params"`
					}
					if json.Unmarshal(e.Msg, &m) == nil && m.Method == acp.MethodTerminalCreate {
						created = &m.Params
					}
				}
				if created == nil || created.Command != binary || !strings.Contains(strings.Join(created.Args, " "), sandbox.LauncherCommand) ||
					created.Args[len(created.Args)-1] != attack("term") {
					t.Errorf("terminal/create = %+v, want the launcher with the command after it", created)
				}
			}
		})
	}
}

// TestEscalatedCommandAsksInBypassThroughTheBinary: in bypassPermissions,
// where nothing else asks, a bash call with escalate: true still asks, says
// it runs unsandboxed and why, and then runs outside the sandbox.
func TestEscalatedCommandAsksInBypassThroughTheBinary(t *testing.T) {
	outside := testsupport.OutsideSandbox(t)
	target := filepath.Join(outside, "allowed")
	script := map[string]any{"turns": []any{map[string]any{"match": "go", "responses": []any{
		map[string]any{"toolCalls": []any{map[string]any{"id": "e1", "name": "bash", "arguments": map[string]any{
			"command": "echo ok > " + target, "escalate": true, "justification": "writes the file the user asked for"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "p1", "name": "bash", "arguments": map[string]any{"command": "echo plain"}}}},
		map[string]any{"text": "ok"}}}}}
	raw, _ := json.Marshal(script)
	dir := t.TempDir()
	scriptFile, cfg := filepath.Join(dir, "script.json"), filepath.Join(dir, "settings.json")
	if err := os.WriteFile(scriptFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"permissions": {"defaultMode": "bypassPermissions"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	p := start(t, cwd, "--script", scriptFile, "--config", cfg, "--state-dir", t.TempDir())
	var mu sync.Mutex
	var asked []*acp.RequestPermissionRequest
	p.client.Permission = func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req)
		return acptest.AllowOnce(ctx, req)
	}
	ctx := testContext(t)
	sess := openSession(t, ctx, p.conn, cwd, &acp.ClientCapabilities{})
	sendPrompt(t, ctx, p.conn, sess.SessionID, "go")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallID != "e1" {
		t.Fatalf("permission requests %d, want exactly the escalated call's", len(asked))
	}
	req, _ := json.Marshal(asked[0])
	if !strings.Contains(string(req), "UNSANDBOXED") || !strings.Contains(string(req), "writes the file the user asked for") {
		t.Errorf("the request does not say it runs unsandboxed and why: %s", req)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "ok\n" {
		t.Errorf("the approved escalated command did not run outside the sandbox: %v", err)
	}
}
