package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/policy"
)

// The kill -9 test re-runs this test binary as a daemon: with
// BRIDGE_TEST_DAEMON set to a state directory, TestMain serves one agent
// on stdin/stdout instead of running tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BRIDGE_TEST_DAEMON"); dir != "" {
		serveDaemon(dir)
		return
	}
	os.Exit(m.Run())
}

type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return os.Stdin.Close() }

func serveDaemon(dir string) {
	loop := &scriptLoop{turns: [][]step{
		{{Text: "first turn"}, {Call: &scriptCall{ID: "c1", Name: "noop", Arguments: json.RawMessage(`{}`)}}, {Remember: json.RawMessage(`{"turn":1}`)}},
		{{Text: "second turn, about to hang"}, {Call: &scriptCall{ID: "c2", Name: "slow", Arguments: json.RawMessage(`{"command":"hang"}`)}}},
	}}
	agent, err := buildTestAgent(loop, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rs, _ := policy.ParseRuleSet([]string{"slow"}, nil, nil)
	agent.SetRules(rs)
	_ = agent.Serve(context.Background(), stdio{os.Stdin, os.Stdout})
}

// TestKill9MidTurn kills a real daemon process with SIGKILL in the middle
// of a turn. A new agent on the same state directory lists the session and
// loads every event the daemon logged before the kill: the first turn and
// the running one up to the update the test saw last (the bridge logs an
// update before sending it).
func TestKill9MidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_DAEMON="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(substr string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("daemon exited before %q", substr)
				}
				if strings.Contains(l, substr) {
					return
				}
			case <-timeout:
				t.Fatalf("timed out waiting for %q", substr)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	waitFor(`"id":1,`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/ws/project","mcpServers":[]}}`)
	waitFor(`"sessionId":"sess-1"`)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"one"}]}}`)
	waitFor(`"stopReason":"end_turn"`)
	send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"two"}]}}`)
	waitFor(`"in_progress"`)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	agent := newTestAgent(t, &scriptLoop{}, dir)
	client := &acptest.Client{}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	list, err := conn.ListSessions(context.Background(), &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != "sess-1" {
		t.Fatalf("list = %+v", list.Sessions)
	}
	if _, err := conn.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: "sess-1", Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.UserMessageChunk:
			got = append(got, "user:"+u.Content.Value.(*acp.TextContent).Text)
		case *acp.AgentMessageChunk:
			got = append(got, "agent:"+u.Content.Value.(*acp.TextContent).Text)
		case *acp.ToolCall:
			got = append(got, fmt.Sprintf("%s:%s", u.ToolCallID, u.Status))
		case *acp.ToolCallUpdate:
			if u.Status != nil {
				got = append(got, fmt.Sprintf("%s:%s", u.ToolCallID, *u.Status))
			}
		}
	}
	// The first turn was synced at its end; the running one was written
	// through to the file up to the kill.
	want := "user:one|agent:first turn|c1:pending|c1:in_progress|c1:completed|" +
		"user:two|agent:second turn, about to hang|c2:pending|c2:in_progress"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("replayed %q\nwant     %q", g, want)
	}
}
