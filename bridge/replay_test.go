package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// TestReplayShowsRecordedTerminalOutput: a command card of a live session
// points at an editor terminal (tier 1) or a display terminal (tier 2);
// after session/load in a new process those terminals do not exist, so the
// replayed card is the recorded output as console text, with its exit
// status, and no terminal content or display-terminal _meta is replayed.
func TestReplayShowsRecordedTerminalOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps acp.ClientCapabilities
		args string
	}{
		{"tier1", acp.ClientCapabilities{Terminal: true}, `{"command":"make test"}`},
		{"tier2", acp.ClientCapabilities{Meta: json.RawMessage(`{"terminal_output":true}`)}, `{"command":"make test","output":"FAIL x\n","exit":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			loop := &scriptLoop{turns: [][]step{{{Call: &scriptCall{ID: "c1", Name: "run", Arguments: json.RawMessage(tc.args)}}}}}
			terms := &acptest.FakeTerminals{Script: map[string]acptest.FakeRun{"bash": {Output: "FAIL x\n", ExitCode: 2}}}
			live := &acptest.Client{Terminals: terms}
			conn, hangUp := connectHangUp(t, newTestAgent(t, loop, dir), live, tc.caps)
			sid := newSession(t, conn, "/ws/project")
			if _, err := prompt(conn, sid, "test it"); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(joinEntries(live), []byte(`"type":"terminal"`)) {
				t.Fatal("the live card shows no terminal; the test does not test the replay")
			}
			hangUp()

			// A new process loads the session, for a client without terminals.
			loader := &acptest.Client{}
			conn2 := connect(t, newTestAgent(t, loop, dir), loader, acp.ClientCapabilities{})
			if _, err := conn2.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: sid, Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}); err != nil {
				t.Fatal(err)
			}
			replayed := joinEntries(loader)
			for _, gone := range []string{`"type":"terminal"`, `terminal_info`, `terminal_output`, `terminal_exit`} {
				if bytes.Contains(replayed, []byte(gone)) {
					t.Errorf("the replay still holds %s:\n%s", gone, replayed)
				}
			}
			var final *acp.ToolCallUpdate
			for _, n := range loader.Updates() {
				if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.Status != nil && (*u.Status == acp.ToolCallCompleted || *u.Status == acp.ToolCallFailed) {
					final = u
				}
			}
			if final == nil || len(final.Content) != 1 {
				t.Fatalf("replayed final update %+v, want one content block", final)
			}
			block, _ := final.Content[0].Value.(*acp.ToolCallContentBlock)
			text, _ := block.Content.Value.(*acp.TextContent)
			if want := "```console\nFAIL x\n```\n\nExited with code 2"; text == nil || text.Text != want {
				t.Errorf("replayed card %+v, want the text %q", final.Content[0].Value, want)
			}
			acptest.CheckSchema(t, loader.Recorder)
		})
	}
}

// TestNewFileDiffSendsNullOldText: clients tell a new file by an explicit
// "oldText": null, in the permission request and the card, live and
// replayed (also from a log written before the key was sent).
func TestNewFileDiffSendsNullOldText(t *testing.T) {
	dir := t.TempDir()
	loop := &scriptLoop{turns: [][]step{{{Call: &scriptCall{ID: "c1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"new.go","new":"package x\n"}`)}}}}}
	live := &acptest.Client{}
	conn, hangUp := connectHangUp(t, newTestAgent(t, loop, dir), live, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "create it"); err != nil {
		t.Fatal(err)
	}
	hangUp()
	var permission, card bool
	for _, e := range live.Recorder.Entries() {
		if e.Dir != acptest.AgentToClient || !bytes.Contains(e.Msg, []byte(`"type":"diff"`)) {
			continue
		}
		if !bytes.Contains(e.Msg, []byte(`"oldText":null`)) {
			t.Errorf("a new file's diff without \"oldText\": null: %s", e.Msg)
		}
		permission = permission || bytes.Contains(e.Msg, []byte(acp.MethodSessionRequestPermission))
		card = card || bytes.Contains(e.Msg, []byte(`"tool_call_update"`))
	}
	if !permission || !card {
		t.Errorf("diff in the permission request %v, in the card %v; want both", permission, card)
	}
	acptest.CheckSchema(t, live.Recorder)

	// A log written by an older dshd left the key out.
	path := dir + "/" + sid + ".jsonl"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := bytes.ReplaceAll(old, []byte(`"oldText":null,`), nil)
	if bytes.Equal(old, rewritten) {
		t.Fatal(`the log holds no "oldText":null to remove`)
	}
	if err := os.WriteFile(path, rewritten, 0o600); err != nil {
		t.Fatal(err)
	}
	loader := &acptest.Client{}
	conn2 := connect(t, newTestAgent(t, loop, dir), loader, acp.ClientCapabilities{})
	if _, err := conn2.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: sid, Cwd: "/ws/project", MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := joinEntries(loader)
	if n := strings.Count(string(replayed), `"type":"diff"`); n == 0 || n != strings.Count(string(replayed), `"oldText":null`) {
		t.Errorf("replayed diffs without \"oldText\": null:\n%s", replayed)
	}
	acptest.CheckSchema(t, loader.Recorder)
}

// joinEntries is every message the agent sent the client, one a line.
func joinEntries(c *acptest.Client) []byte {
	var b bytes.Buffer
	for _, e := range c.Recorder.Entries() {
		if e.Dir == acptest.AgentToClient {
			b.Write(e.Msg)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
