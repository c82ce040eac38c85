package bridge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
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
