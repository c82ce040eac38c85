package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
)

// TestToolRecordsLoggedWithFinalUpdate: a call's tool records are logged
// with its final update's record (one AppendAll, see sessionlog's
// TestAppendAll), in the order a replay reads them: tool/call,
// tool/result, then the completed update, none of them missing.
func TestToolRecordsLoggedWithFinalUpdate(t *testing.T) {
	dir := t.TempDir()
	loop := &scriptLoop{turns: [][]step{{{Call: &scriptCall{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}}}}
	conn, hangUp := connectHangUp(t, newTestAgent(t, loop, dir), &acptest.Client{}, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "read it"); err != nil {
		t.Fatal(err)
	}
	hangUp()
	f, err := os.Open(dir + "/" + sid + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kinds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			T      string          `json:"t"`
			Update json.RawMessage `json:"update"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.T == "" {
			continue
		}
		k := r.T
		if r.T == "update" && bytes.Contains(sc.Bytes(), []byte(`"status":"completed"`)) {
			k = "update:completed"
		}
		kinds = append(kinds, k)
	}
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "tool/call tool/result update:completed") {
		t.Errorf("log records %s; want tool/call, tool/result and the completed update together", got)
	}
}

// logCheckingClient checks, at every session/update it receives, that the
// session log already holds at least as many update records as it has
// received updates. An update that went out unlogged, or whose record came
// later than the next updates, fails it; the order inside one batch is
// TestWriteBatchLogsBeforeSending's (here the window between a send and
// its record is microseconds, too short to be caught reliably).
type logCheckingClient struct {
	acptest.Client
	dir string // the state directory: the log is <dir>/<session id>.jsonl

	mu       sync.Mutex
	received int
	short    []string // "received n, logged m" for each update that was early
}

func (c *logCheckingClient) SessionUpdate(ctx context.Context, n *acp.SessionNotification) error {
	data, err := os.ReadFile(filepath.Join(c.dir, n.SessionID+".jsonl"))
	logged := bytes.Count(data, []byte(`{"t":"update"`))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.received++
	if err != nil || logged < c.received {
		c.short = append(c.short, fmt.Sprintf("update %d arrived with %d logged (%v)", c.received, logged, err))
	}
	return nil
}

// TestUpdatesLoggedBeforeSentConcurrently: with eight goroutines of a turn
// executing calls at once (their updates flushed in shared batches), every
// update reaches the editor with its record in the session log already
// (see logCheckingClient for what that can catch).
func TestUpdatesLoggedBeforeSentConcurrently(t *testing.T) {
	dir := t.TempDir()
	const workers, each = 8, 25
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					turn.Execute(ctx, bridge.ToolCall{ID: fmt.Sprintf("c%d-%d", w, i), Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
				}
			})
		}
		wg.Wait()
		turn.Text("done")
		return acp.StopEndTurn, nil
	})
	client := &logCheckingClient{dir: dir}
	conn, _ := connectWith(t, newTestAgent(t, loop, dir), acp.ClientCapabilities{}, func(ctx context.Context, rwc io.ReadWriteCloser) *acp.AgentConn {
		return acp.ConnectAgent(ctx, rwc, client)
	})
	sid := newSession(t, conn, "/ws/project")
	client.mu.Lock()
	before := client.received // session/new's
	client.mu.Unlock()
	if _, err := prompt(conn, sid, "read them"); err != nil {
		t.Fatal(err)
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	if len(client.short) > 0 {
		t.Fatalf("%d updates reached the client before their records were logged; first: %s", len(client.short), client.short[0])
	}
	// Announced, in progress and completed for each call, the text, and
	// the session's title.
	if want := workers*each*3 + 1; client.received-before < want {
		t.Fatalf("received %d updates in the turn, want at least %d", client.received-before, want)
	}
}
