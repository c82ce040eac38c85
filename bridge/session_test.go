package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// connect serves agent over an in-memory pipe and returns the initialized
// client connection.
func connect(t *testing.T, agent *bridge.Agent, client *acptest.Client, caps acp.ClientCapabilities) *acp.AgentConn {
	t.Helper()
	conn, _ := connectHangUp(t, agent, client, caps)
	return conn
}

// connectHangUp is connect that also returns hangUp, which closes the
// connection and returns once the agent has closed its sessions (and
// their logs), as when a daemon's editor goes away.
func connectHangUp(t *testing.T, agent *bridge.Agent, client *acptest.Client, caps acp.ClientCapabilities) (conn *acp.AgentConn, hangUp func()) {
	t.Helper()
	return connectWith(t, agent, caps, func(ctx context.Context, rwc io.ReadWriteCloser) *acp.AgentConn {
		return client.Serve(ctx, rwc)
	})
}

// connectWith is connectHangUp for any client: dial connects it to its end
// of the pipe.
func connectWith(t *testing.T, agent *bridge.Agent, caps acp.ClientCapabilities, dial func(context.Context, io.ReadWriteCloser) *acp.AgentConn) (conn *acp.AgentConn, hangUp func()) {
	t.Helper()
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = agent.Serve(ctx, agentEnd); close(served) }()
	conn = dial(ctx, clientEnd)
	hangUp = func() {
		cancel()
		clientEnd.Close()
		<-served
	}
	t.Cleanup(hangUp)
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &caps}); err != nil {
		t.Fatal(err)
	}
	return conn, hangUp
}

func newSession(t *testing.T, conn *acp.AgentConn, cwd string) string {
	t.Helper()
	s, err := conn.NewSession(context.Background(), &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return s.SessionID
}

func prompt(conn *acp.AgentConn, sid, text string) (*acp.PromptResponse, error) {
	return conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text(text)}})
}

// TestConcurrentSessions runs prompt turns with tool calls in many
// sessions at once; each session sees exactly its own updates.
func TestConcurrentSessions(t *testing.T) {
	const sessions, calls = 8, 20
	agent := newTestAgent(t, callsLoop(calls, "noop", json.RawMessage(`{}`)), t.TempDir())
	client := &acptest.Client{}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = newSession(t, conn, "/ws/project")
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := prompt(conn, id, "go")
			if err == nil && resp.StopReason != acp.StopEndTurn {
				err = fmt.Errorf("stop reason %s", resp.StopReason)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	completed := map[string]int{}
	for _, n := range client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.Status != nil && *u.Status == acp.ToolCallCompleted {
			completed[n.SessionID]++
		}
	}
	for _, id := range ids {
		if completed[id] != calls {
			t.Errorf("session %s: %d completed calls, want %d", id, completed[id], calls)
		}
	}
}

// blockingLoop starts a slow tool call and reports when it is running.
func blockingLoop(running chan<- struct{}) bridge.Loop {
	return bridge.LoopFunc(func(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
		close(running)
		t.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "slow", Arguments: json.RawMessage(`{"command":"sleep"}`)})
		t.Text("after cancel") // dropped or sent before the response, never after
		return acp.StopEndTurn, nil
	})
}

// TestCloseCancelsTurn: session/close cancels the running turn like
// session/cancel (stopReason cancelled, the open call failed) and frees
// the session.
func TestCloseCancelsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		running := make(chan struct{})
		agent := newTestAgent(t, blockingLoop(running), t.TempDir())
		rs, _ := policyAllow("slow")
		agent.SetRules(rs)
		client := &acptest.Client{}
		conn := connect(t, agent, client, acp.ClientCapabilities{})
		sid := newSession(t, conn, "/ws/project")
		type result struct {
			resp *acp.PromptResponse
			err  error
		}
		done := make(chan result, 1)
		go func() {
			r, err := prompt(conn, sid, "block")
			done <- result{r, err}
		}()
		<-running
		waitForUpdate(t, client, func(u acp.SessionUpdateVariant) bool {
			tu, ok := u.(*acp.ToolCallUpdate)
			return ok && tu.Status != nil && *tu.Status == acp.ToolCallInProgress
		})
		if _, err := conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || r.resp.StopReason != acp.StopCancelled {
			t.Fatalf("prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
		}
		var failed bool
		for _, n := range client.Updates() {
			if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.Status != nil && *u.Status == acp.ToolCallFailed {
				failed = true
			}
		}
		if !failed {
			t.Error("the running call was not marked failed")
		}
		if _, err := prompt(conn, sid, "again"); err == nil {
			t.Error("a closed session accepted a prompt")
		}
		assertNoUpdateAfterResponse(t, client.Recorder.Entries())
	})
}

// assertNoUpdateAfterResponse checks that no session/update follows the
// response of the last session/prompt that got a result.
func assertNoUpdateAfterResponse(t *testing.T, entries []acptest.Entry) {
	t.Helper()
	promptIDs := map[string]bool{}
	answered := -1
	for i, e := range entries {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(e.Msg, &m)
		switch {
		case e.Dir == acptest.ClientToAgent && m.Method == acp.MethodSessionPrompt:
			promptIDs[string(m.ID)] = true
		case e.Dir == acptest.AgentToClient && m.Method == "" && m.Result != nil && promptIDs[string(m.ID)]:
			answered = i
		case e.Dir == acptest.AgentToClient && m.Method == acp.MethodSessionUpdate && answered >= 0:
			t.Errorf("session/update after the prompt's response: %s", e.Msg)
		}
	}
	if answered < 0 {
		t.Error("no prompt response recorded")
	}
}

// TestExecuteContexts: a call made with a context of the loop's own still
// ends when the turn is cancelled, and Execute after the turn returned
// announces nothing.
func TestExecuteContexts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := make(chan *bridge.Turn, 1)
		running := make(chan struct{})
		var res registry.Result
		loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
			close(running)
			res = turn.Execute(context.Background(), bridge.ToolCall{ID: "c1", Name: "slow", Arguments: json.RawMessage(`{"command":"x"}`)})
			late <- turn
			return acp.StopEndTurn, nil
		})
		agent := newTestAgent(t, loop, t.TempDir())
		rs, _ := policyAllow("slow")
		agent.SetRules(rs)
		client := &acptest.Client{}
		conn := connect(t, agent, client, acp.ClientCapabilities{})
		sid := newSession(t, conn, "/ws/project")
		done := make(chan *acp.PromptResponse, 1)
		go func() {
			r, _ := prompt(conn, sid, "go")
			done <- r
		}()
		<-running
		waitForUpdate(t, client, func(u acp.SessionUpdateVariant) bool {
			tu, ok := u.(*acp.ToolCallUpdate)
			return ok && tu.Status != nil && *tu.Status == acp.ToolCallInProgress
		})
		if err := conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		if r := <-done; r == nil || r.StopReason != acp.StopCancelled {
			t.Fatalf("prompt = %+v, want cancelled", r)
		}
		if !res.IsError || res.Error.Code != registry.CodeCancelled {
			t.Errorf("result = %+v, want CANCELLED", res)
		}
		turn := <-late
		before := len(client.Updates())
		if r := turn.Execute(context.Background(), bridge.ToolCall{ID: "c2", Name: "noop", Arguments: json.RawMessage(`{}`)}); !r.IsError {
			t.Errorf("Execute after the turn = %+v, want an error", r)
		}
		turn.Text("too late")
		synctest.Wait() // anything sent would have arrived by now
		if after := len(client.Updates()); after != before {
			t.Errorf("%d updates after the turn ended", after-before)
		}
		assertNoUpdateAfterResponse(t, client.Recorder.Entries())
	})
}

// waitForUpdate waits (in a synctest bubble) until agent and client are
// idle and fails unless an update that matches has arrived by then.
func waitForUpdate(t *testing.T, c *acptest.Client, match func(acp.SessionUpdateVariant) bool) {
	t.Helper()
	synctest.Wait()
	for _, n := range c.Updates() {
		if match(n.Update.Value) {
			return
		}
	}
	t.Fatal("agent and client are idle and the update has not arrived")
}

// TestTornLogAfterCrash: a session log whose last line was torn by a crash
// is listed and loaded by a new agent; every complete event is replayed
// and the torn line is skipped.
func TestTornLogAfterCrash(t *testing.T) {
	dir := t.TempDir()
	loop := &scriptLoop{turns: [][]step{{{Text: "first reply"}, {Remember: json.RawMessage(`{"n":1}`)}}, {{EchoHistory: true}}}}
	first := newTestAgent(t, loop, dir)
	client := &acptest.Client{}
	conn, hangUp := connectHangUp(t, first, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "hello"); err != nil {
		t.Fatal(err)
	}
	hangUp() // the daemon is gone: its session lock with it
	// The crash: the daemon dies while writing the next record.
	f, err := os.OpenFile(filepath.Join(dir, sid+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"t":"update","ts":1,"d":{"sessionUpdate":"agent_mess`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	second := newTestAgent(t, loop, dir)
	client2 := &acptest.Client{}
	conn2 := connect(t, second, client2, acp.ClientCapabilities{})
	list, err := conn2.ListSessions(context.Background(), &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "hello" {
		t.Fatalf("list = %+v", list.Sessions)
	}
	if _, err := conn2.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: sid, Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, n := range client2.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.UserMessageChunk:
			texts = append(texts, "user:"+u.Content.Value.(*acp.TextContent).Text)
		case *acp.AgentMessageChunk:
			texts = append(texts, "agent:"+u.Content.Value.(*acp.TextContent).Text)
		}
	}
	if got, want := strings.Join(texts, "|"), "user:hello|agent:first reply"; got != want {
		t.Errorf("replayed %q, want %q", got, want)
	}
	// The history the loop remembered survives; new events append cleanly.
	resp, err := prompt(conn2, sid, "continue")
	if err != nil || resp.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt after load: %v %v", resp, err)
	}
	last := client2.Updates()[len(client2.Updates())-1]
	if u, ok := last.Update.Value.(*acp.AgentMessageChunk); !ok || u.Content.Value.(*acp.TextContent).Text != "history: 1 records" {
		t.Errorf("last update %+v, want the loop to see 1 history record", last.Update.Value)
	}
}

// fileTool reads and writes through host.Files, and reports whether editor
// terminals were offered.
func fileTool() *registry.Definition {
	type args struct {
		Path string `json:"path"`
	}
	return mustDefine(registry.Define(registry.Spec[args]{Name: "copy_upper", Description: "Copy a file to <path>.out, upper-cased.", Kind: "read",
		Subjects: func(_ registry.Call, a args) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path}, {Kind: registry.SubjectPath, Value: a.Path + ".out", Writes: true}}
		}},
		func(ctx context.Context, call registry.Call, a args) (registry.Result, error) {
			h := call.Host()
			in, err := h.Land(a.Path)
			if err != nil {
				return registry.Result{}, err
			}
			out, err := h.Land(a.Path + ".out")
			if err != nil {
				return registry.Result{}, err
			}
			text, err := h.Files().ReadTextFile(ctx, in, 0, 0)
			if err != nil {
				return registry.Result{}, err
			}
			if err := h.Files().WriteTextFile(ctx, out, strings.ToUpper(text)); err != nil {
				return registry.Result{}, err
			}
			_, terms := h.Terminals()
			return registry.TextResult(fmt.Sprintf("terminals=%v", terms)), nil
		}))
}

// TestHostFiles: file access goes through the editor exactly when the
// client advertised fs, and to the disk otherwise; terminals are offered
// only when advertised.
func TestHostFiles(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, editor := range []bool{false, true} {
		t.Run(fmt.Sprintf("editor=%v", editor), func(t *testing.T) {
			var got string
			loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
				res := turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: "copy_upper", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
				got = res.Content[0].Text
				return acp.StopEndTurn, nil
			})
			agent := newTestAgent(t, loop, t.TempDir())
			client := &acptest.Client{}
			caps := acp.ClientCapabilities{}
			mem := acptest.NewMemFS(map[string]string{filepath.Join(cwd, "a.txt"): "in the buffer"})
			if editor {
				client.FS = mem
				caps.FS = &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
			}
			conn := connect(t, agent, client, caps)
			sid := newSession(t, conn, cwd)
			if err := agent.Registry().AddScoped(sid, fileTool()); err != nil {
				t.Fatal(err)
			}
			if _, err := prompt(conn, sid, "copy"); err != nil {
				t.Fatal(err)
			}
			if got != "terminals=false" {
				t.Fatalf("tool said %q", got)
			}
			out := filepath.Join(cwd, "a.txt.out")
			if editor {
				if s, ok := mem.File(out); !ok || s != "IN THE BUFFER" {
					t.Errorf("editor file %q = %q, %v", out, s, ok)
				}
				if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the disk was written although the editor offers fs: %v", err)
				}
			} else {
				b, err := os.ReadFile(out)
				if err != nil || string(b) != "ON DISK" {
					t.Errorf("disk file = %q, %v", b, err)
				}
				os.Remove(out)
			}
		})
	}
}

func policyAllow(tools ...string) (policy.RuleSet, error) {
	return policy.ParseRuleSet(tools, nil, nil)
}

// TestChildScope: a call in a child scope ("<session>/<child>") sees the
// child's restricted tools and still goes through the session's policy.
func TestChildScope(t *testing.T) {
	var results []registry.Result
	var agent *bridge.Agent
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		child := turn.SessionInfo().ID + "/task-1"
		if err := agent.Registry().Restrict(child, turn.SessionInfo().ID, registry.AllowOnly("noop", "edit_file")); err != nil {
			return "", err
		}
		defer agent.Registry().RemoveScope(child)
		for _, c := range []struct{ name, args string }{
			{"noop", `{}`}, {"read_file", `{"path":"a.go"}`}, {"edit_file", `{"path":"a.go","new":"x"}`},
		} {
			results = append(results, turn.Execute(ctx, bridge.ToolCall{ID: c.name, Name: c.name, Scope: child, Arguments: json.RawMessage(c.args)}))
		}
		return acp.StopEndTurn, nil
	})
	agent = newTestAgent(t, loop, "")
	client := &acptest.Client{Permission: acptest.RejectOnce}
	conn := connect(t, agent, client, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	results = nil
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	if results[0].IsError {
		t.Errorf("noop in the child scope: %+v", results[0])
	}
	if !results[1].IsError || results[1].Error.Code != registry.CodeUnknownTool {
		t.Errorf("read_file is not visible to the child: %+v", results[1])
	}
	if !results[2].IsError || results[2].Error.Code != registry.CodeDenied {
		t.Errorf("edit_file in the child must ask the session's user (who rejects): %+v", results[2])
	}
}

// TestListShowsConversationsOnly: session/list shows sessions with at
// least one prompt, each titled: by its title, or (its first turn never
// finished) by its first prompt's gist; fresh and abandoned empty sessions
// are left out.
func TestListShowsConversationsOnly(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []struct {
		id     string
		prompt string // "" : none
		title  string
	}{
		{id: "empty"},
		{id: "killed", prompt: "Refactor the parser\nplease"},
		{id: "named", prompt: "hi", title: "Parser refactoring"},
	} {
		l, err := sessionlog.Create(dir, sessionlog.Header{SessionID: s.id, Cwd: "/ws/project"})
		if err != nil {
			t.Fatal(err)
		}
		if s.prompt != "" {
			if err := l.Append(sessionlog.KindPrompt, []acp.ContentBlock{acp.Text(s.prompt)}); err != nil {
				t.Fatal(err)
			}
		}
		if s.title != "" {
			if err := l.Append(sessionlog.KindTitle, sessionlog.Title{Title: s.title}); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	client := &acptest.Client{}
	conn := connect(t, newTestAgent(t, &scriptLoop{}, dir), client, acp.ClientCapabilities{})
	newSession(t, conn, "/ws/project") // the caller's own fresh session
	list, err := conn.ListSessions(context.Background(), &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list.Sessions {
		if s.Title == nil || s.UpdatedAt == nil {
			t.Errorf("session %s listed without title or updatedAt: %+v", s.SessionID, s)
			continue
		}
		got[s.SessionID] = *s.Title
	}
	if want := map[string]string{"killed": "Refactor the parser", "named": "Parser refactoring"}; !maps.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	acptest.CheckSchema(t, client.Recorder)
}
