//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// github.com/creack/pty gives these tests the pseudo-terminal `dshd auth`
// runs in when an editor starts it: hidden key input and Ctrl+C are
// terminal behaviour that a pipe cannot show.

// fakeProvider is an OpenAI-compatible and Anthropic-like model list on
// loopback that accepts only key good.
func fakeProvider(t *testing.T, good string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key")
		if key == "" {
			key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if key != good {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
			return
		}
		w.Write([]byte(`{"data":[{"id":"model-a"},{"id":"model-b"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// terminal is dshd running in a pseudo-terminal.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	more chan struct{} // signalled after each read
	eof  chan struct{}
}

func startTerminal(t *testing.T, config string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, "TERM=dumb")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, more: make(chan struct{}, 1), eof: make(chan struct{})}
	go func() {
		defer close(term.eof)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tty.Close()
		if t.Failed() {
			t.Logf("terminal:\n%s", term.output())
		}
	})
	return term
}

func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// expect waits until the output since the start holds want count times.
func (tm *terminal) expect(want string, count int) {
	tm.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for strings.Count(tm.output(), want) < count {
		select {
		case <-tm.more:
		case <-tm.eof:
			if strings.Count(tm.output(), want) < count {
				tm.t.Fatalf("dshd ended before printing %q", want)
			}
		case <-deadline.C:
			tm.t.Fatalf("no %q after 30s", want)
		}
	}
}

func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := tm.tty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

func (tm *terminal) wait() int {
	tm.t.Helper()
	err := tm.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		tm.t.Fatal(err)
	}
	return 0
}

// A rejected key is asked for again, the accepted one stored 0600 and
// never echoed; logout removes it.
func TestAuthThroughTerminal(t *testing.T) {
	srv := fakeProvider(t, "sk-good-4711")
	for _, tc := range []struct {
		name, choice string
		args         []string
		url          bool // asks for the server URL
		model        string
		want         map[string]any
	}{
		{"local server", "4", []string{"auth"}, true, "\r", map[string]any{"service": "local", "baseURL": srv.URL + "/v1", "model": "model-a"}},
		{"Anthropic", "1", []string{"auth", "--base-url", srv.URL}, false, "claude-test\r", map[string]any{"service": "anthropic", "baseURL": srv.URL, "model": "claude-test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := t.TempDir()
			tm := startTerminal(t, config, tc.args...)
			tm.expect("Provider [1-4]: ", 1)
			tm.send("9\r")
			tm.expect("Please answer a number from 1 to 4.", 1)
			tm.send(tc.choice + "\r")
			if tc.url {
				tm.expect("Server URL [http://localhost:11434/v1]: ", 1)
				tm.send(srv.URL + "/v1\r")
			}
			tm.expect("typing is hidden): ", 1)
			tm.send("sk-wrong\r")
			tm.expect("the key was rejected (401 Unauthorized: invalid api key).", 1)
			tm.expect("typing is hidden): ", 2)
			tm.send("sk-good-4711\r")
			tm.expect("ok.", 1)
			tm.expect("Model [", 1)
			tm.send(tc.model)
			tm.expect("Saved", 1)
			if code := tm.wait(); code != 0 {
				t.Fatalf("dshd auth exited %d", code)
			}
			if out := tm.output(); strings.Contains(out, "sk-good-4711") || strings.Contains(out, "sk-wrong") {
				t.Errorf("the key was echoed:\n%s", out)
			}
			path := filepath.Join(config, "dshd", "credentials.json")
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("credentials file: %v, %v; want mode 0600", fi, err)
			}
			var got map[string]any
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			tc.want["apiKey"] = "sk-good-4711"
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("stored %s = %v, want %v", k, got[k], v)
				}
			}

			logout := exec.Command(binary, "logout")
			logout.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
			out, err := logout.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Removed the stored credentials") {
				t.Errorf("dshd logout: %v\n%s", err, out)
			}
			cmd := exec.Command(binary, "logout")
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "No stored credentials") {
				t.Errorf("second dshd logout: %v\n%s", err, out)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("credentials still there after logout: %v", err)
			}
		})
	}
}

// Ctrl+C at the hidden key prompt and Ctrl+D at the first question end
// the dialogue with a non-zero status and store nothing.
func TestAuthCancelled(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string // answer to each prompt
	}{
		{"Ctrl+C at the key", []string{"2\r", "\x03"}},
		{"Ctrl+D at the provider", []string{"\x04"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := t.TempDir()
			tm := startTerminal(t, config, "auth")
			prompts := []string{"Provider [1-4]: ", "typing is hidden): "}
			for i, k := range tc.keys {
				tm.expect(prompts[i], 1)
				tm.send(k)
			}
			tm.expect("Cancelled; nothing was saved.", 1)
			if code := tm.wait(); code == 0 {
				t.Error("a cancelled dshd auth exited 0: the editor would take it for a success")
			}
			if _, err := os.Stat(filepath.Join(config, "dshd", "credentials.json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("credentials stored after cancel: %v", err)
			}
		})
	}
}
