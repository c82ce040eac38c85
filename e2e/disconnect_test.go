package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// hangTurn is a script whose first prompt ("first") completes and whose
// second ("second") does call and then hangs in a 30 s model response.
func hangTurn(call toolCall) script {
	return script{Turns: []turn{
		{Match: "^first$", Responses: []response{{Text: "first done"}}},
		{Match: "^second$", Responses: []response{
			{Text: "working", ToolCalls: []toolCall{call}},
			{DelayMs: 30000, Text: "never"},
		}},
	}}
}

// TestFaultDisconnect disconnects the client in the middle of a turn, of a
// permission request and of a running command (foreground or background),
// once by closing the
// daemon's stdin (the client lives on and reads) and once as a killed
// client does (both pipes close). The daemon must exit within a few
// seconds (the measured time is logged), leave no process of any process
// group its children had, and leave a session log that a new daemon lists
// and loads with the interrupted turn's prompt and first message.
func TestFaultDisconnect(t *testing.T) {
	scenarios := []struct {
		name string
		call toolCall
		// ready waits until the daemon is where the scenario disconnects.
		ready func(t *testing.T, ws string, c *acptest.Client, sid string, asked <-chan struct{})
	}{
		{"mid-turn", toolCall{ID: "c1", Name: "read", Arguments: map[string]any{"path": "small.txt"}},
			func(t *testing.T, _ string, c *acptest.Client, sid string, _ <-chan struct{}) {
				if err := c.WaitUpdates(callCtx(t, 60*time.Second), func(ns []acp.SessionNotification) bool {
					return toolStatuses(ns, sid)["c1"] == acp.ToolCallCompleted
				}); err != nil {
					t.Fatalf("the read never completed: %v", err)
				}
			}},
		{"mid-permission", toolCall{ID: "c1", Name: "write", Arguments: map[string]any{"path": "out.txt", "content": "x"}},
			func(t *testing.T, _ string, _ *acptest.Client, _ string, asked <-chan struct{}) {
				select {
				case <-asked:
				case <-time.After(10 * time.Second):
					t.Fatal("no permission request")
				}
			}},
		{"mid-command", toolCall{ID: "c1", Name: "bash", Arguments: map[string]any{"command": "sleep 30 & echo > ready; wait; echo late > late.txt"}}, waitForSleep},
		{"background-command", toolCall{ID: "c1", Name: "bash", Arguments: map[string]any{"command": "sleep 30 & echo > ready; wait; echo late > late.txt", "runInBackground": true}}, waitForSleep},
	}
	for _, sc := range scenarios {
		for _, how := range []string{"stdin-closed", "client-killed"} {
			t.Run(sc.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, hangTurn(sc.call))
				if err := os.WriteFile(filepath.Join(f.ws, "small.txt"), []byte("small\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				readyFIFO(t, f.ws, "ready") // for the commands' "echo > ready"
				p := f.start(t)
				asked := make(chan struct{}, 1)
				c := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
					if sc.name == "mid-permission" {
						asked <- struct{}{}
						return acptest.BlockUntilCancelled(ctx, req)
					}
					return acptest.AllowOnce(ctx, req)
				}}
				conn := p.client(t, c)
				sid := open(t, conn, f.ws, acp.ClientCapabilities{})
				ctx := callCtx(t, 30*time.Second)
				if _, err := prompt(ctx, conn, sid, "first"); err != nil {
					t.Fatal(err)
				}
				turnCtx, cancelTurn := context.WithCancel(context.Background())
				defer cancelTurn()
				go func() { _, _ = prompt(turnCtx, conn, sid, "second") }()
				sc.ready(t, f.ws, c, sid, asked)

				// Every process group the daemon's children are in.
				var pgids []int
				for _, d := range testsupport.Descendants(p.pid()) {
					pgids = append(pgids, d.PGID)
				}
				start := time.Now()
				if how == "stdin-closed" {
					_ = p.stdin.Close()
				} else {
					_ = conn.Close()
				}
				if !p.waitExit(5 * time.Second) {
					t.Fatalf("the daemon still runs 5 s after the client disconnected (%s)", how)
				}
				t.Logf("daemon exited %v after the disconnect (%v)", time.Since(start).Round(time.Millisecond), p.err)
				if !testsupport.GroupsGoneWithin(30*time.Second, pgids...) {
					t.Errorf("processes left in the children's process groups: %+v", testsupport.InGroups(pgids...))
				}
				if _, err := os.Stat(filepath.Join(f.ws, "late.txt")); err == nil {
					t.Error("the command ran to its end after the disconnect")
				}
				acptest.CheckSchema(t, c.Recorder)

				// A new daemon lists and loads the session.
				checkLoads(t, f, sid, []string{"first", "first done", "second", "working"})
			})
		}
	}
}

// waitForSleep waits until the scenario's command says (through the FIFO
// "ready" in the workspace) that its sleep runs.
func waitForSleep(t *testing.T, ws string, _ *acptest.Client, _ string, _ <-chan struct{}) {
	t.Helper()
	waitFIFO(t, filepath.Join(ws, "ready"), 60*time.Second)
}

// checkLoads starts a new daemon on f, lists the sessions, loads sid and
// checks that the replay holds the texts, in order, as user or agent
// message chunks. Then it closes the session: the daemon's goroutines and
// file descriptors must be back at their baseline after initialize.
func checkLoads(t *testing.T, f *fixture, sid string, texts []string) *acptest.Client {
	t.Helper()
	p := f.start(t)
	c := &acptest.Client{}
	conn := p.client(t, c)
	ctx := callCtx(t, 30*time.Second)
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}}); err != nil {
		t.Fatal(err)
	}
	stats := connStats(conn)
	base := statsBaseline(t, stats)
	list, err := conn.ListSessions(ctx, &acp.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list.Sessions {
		found = found || s.SessionID == sid
	}
	if !found {
		t.Fatalf("session/list after the restart lacks %s: %+v", sid, list.Sessions)
	}
	if _, err := conn.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: sid, Cwd: f.ws, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	var got []string
	for _, n := range c.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.UserMessageChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				got = append(got, tc.Text)
			}
		case *acp.AgentMessageChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				got = append(got, tc.Text)
			}
		}
	}
	rest := got
	for _, want := range texts {
		i := indexString(rest, want)
		if i < 0 {
			t.Errorf("the replay lacks %q in order; replayed texts: %q", want, got)
			break
		}
		rest = rest[i+1:]
	}
	acptest.CheckSchema(t, c.Recorder)
	closeSession(t, conn, sid)
	expectBaseline(t, "load after the restart", stats, base)
	return c
}

func indexString(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}
