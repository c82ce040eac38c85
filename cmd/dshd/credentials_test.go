package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// With credentials stored by dshd auth and no provider named anywhere
// else, dshd talks to the stored provider with the stored key; the key
// shows in no log, no session log and no protocol message. The terminal
// auth method is advertised to a client that can run it, and ACP logout
// removes the credentials.
func TestStoredCredentials(t *testing.T) {
	v := acptest.SchemaOrSkip(t)
	ctx := testContext(t)
	const key = "sk-stored-secret-0815"
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"1","object":"chat.completion.chunk","model":"fake-model","choices":[{"index":0,"delta":{"role":"assistant","content":"hello from the stored provider"},"finish_reason":null}]}`,
			`{"id":"1","object":"chat.completion.chunk","model":"fake-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			w.Write([]byte("data: " + chunk + "\n\n"))
		}
	}))
	defer srv.Close()

	config, state, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	creds := filepath.Join(config, "dshd", "credentials.json")
	if err := os.MkdirAll(filepath.Dir(creds), 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]string{"service": "local", "baseURL": srv.URL + "/v1", "model": "fake-model", "apiKey": key})
	if err := os.WriteFile(creds, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startEnv(t, cwd, []string{"XDG_CONFIG_HOME=" + config, "OPENAI_API_KEY="}, "--state-dir", state, "--log-level", "debug")
	init, err := p.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1,
		ClientCapabilities: &acp.ClientCapabilities{Auth: &acp.AuthCapabilities{Terminal: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var terminal *acp.AuthMethodTerminal
	for _, m := range init.AuthMethods {
		if tm, ok := m.Value.(*acp.AuthMethodTerminal); ok {
			terminal = tm
		}
	}
	if terminal == nil || terminal.ID != authMethodID || len(terminal.Args) != 1 || terminal.Args[0] != "auth" {
		t.Fatalf("auth methods %+v: want the terminal method running dshd auth", init.AuthMethods)
	}
	if init.AgentCapabilities.Auth == nil || init.AgentCapabilities.Auth.Logout == nil {
		t.Error("logout is not advertised")
	}
	sess, err := p.conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sendPrompt(t, ctx, p.conn, sess.SessionID, "hi")
	mu.Lock()
	// (Before the chat request, the provider may ask the server for its
	// context window.)
	if !slices.Contains(auths, "/v1/chat/completions Bearer "+key) {
		t.Errorf("the provider saw %q", auths)
	}
	mu.Unlock()
	var sent strings.Builder
	for _, e := range p.client.Recorder.Entries() {
		sent.Write(e.Msg)
	}
	if !strings.Contains(sent.String(), "hello from the stored provider") {
		t.Errorf("the reply did not come from the stored provider")
	}
	if _, err := p.conn.Logout(ctx, &acp.LogoutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(creds); !os.IsNotExist(err) {
		t.Errorf("credentials still there after logout: %v", err)
	}
	if err := p.client.Recorder.Validate(v); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	if strings.Contains(sent.String(), key) {
		t.Error("the key went over the protocol")
	}
	if strings.Contains(p.stderr.String(), key) {
		t.Error("the key is in the log")
	}
	filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), key) {
				t.Errorf("the key is in %s", path)
			}
		}
		return nil
	})
}

// Without a provider the demo plays, and its reply says how to set one up.
func TestDemoSaysHowToSetUp(t *testing.T) {
	ctx := testContext(t)
	cwd := t.TempDir()
	p := start(t, cwd, "--state-dir", t.TempDir())
	sess := openSession(t, ctx, p.conn, cwd, nil)
	sendPrompt(t, ctx, p.conn, sess.SessionID, "hello")
	var first string
	for _, n := range p.client.Updates() {
		if c, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
			b, _ := json.Marshal(c.Content)
			first = string(b)
			break
		}
	}
	if !strings.Contains(first, "dshd auth") || !strings.Contains(first, "no model provider is set up") {
		t.Errorf("the demo's first words %s do not say how to set up a provider", first)
	}
	p.stop(t)
}
