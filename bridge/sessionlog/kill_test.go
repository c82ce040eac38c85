package sessionlog

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

const childEnv = "SESSIONLOG_TEST_CHILD_DIR"

// TestMain lets the test binary double as the child of TestSIGKILL.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		runChild(dir)
		return
	}
	os.Exit(m.Run())
}

// runChild appends numbered records forever, announcing each completed
// Append on stdout ("appended N") and syncing every few records, until it
// is killed.
func runChild(dir string) {
	l, err := Create(dir, Header{SessionID: "killed", Cwd: "/w"})
	if err != nil {
		os.Exit(2)
	}
	text := strings.Repeat("payload ", 300)
	for i := 0; ; i++ {
		if err := l.Append(KindUpdate, map[string]any{"seq": i, "text": text}); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("appended " + strconv.Itoa(i) + "\n")
		if i%7 == 6 {
			if err := l.Sync(); err != nil {
				os.Exit(4)
			}
		}
	}
}

// TestSIGKILL kills a process that is appending as fast as it can, then
// checks that a new Open loads every record whose Append had returned
// (synced or not: a SIGKILL does not lose the page cache), in order, and
// that appending afterwards works.
func TestSIGKILL(t *testing.T) {
	captureWarnings(t)
	dir := t.TempDir()
	cmd, stdout := testsupport.StartSelf(t, childEnv+"="+dir)
	// After some appends, kill it mid-flight (it appends without pause, so
	// the kill lands wherever it lands: any point must be safe).
	var out []byte
	chunk := make([]byte, 4096)
	for bytes.Count(out, []byte("\n")) < 40 {
		n, err := stdout.Read(chunk)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		out = append(out, chunk[:n]...)
	}
	cmd.Process.Kill()
	rest, _ := io.ReadAll(stdout) // announcements written before the kill
	out = append(out, rest...)
	cmd.Wait()
	appended := 0 // records whose Append returned before the kill
	for _, line := range strings.Split(string(out), "\n") {
		if seq, ok := strings.CutPrefix(line, "appended "); ok {
			n, err := strconv.Atoi(seq)
			if err != nil {
				continue // a torn announcement: the kill hit the write
			}
			appended = max(appended, n+1)
		}
	}

	l, err := Open(dir, "killed")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	records, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(records)-1 < appended {
		t.Fatalf("%d records survived, %d had been appended", len(records)-1, appended)
	}
	for i, r := range records[1:] {
		var p struct{ Seq int }
		if err := json.Unmarshal(r.Payload, &p); err != nil || p.Seq != i {
			t.Fatalf("record %d: seq %d, %v", i, p.Seq, err)
		}
	}
	if err := l.Append(KindPrompt, "resumed"); err != nil {
		t.Fatal(err)
	}
	after, _ := l.Read()
	if len(after) != len(records)+1 || after[len(after)-1].Kind != KindPrompt {
		t.Fatalf("append after crash: %d records, last %s", len(after), after[len(after)-1].Kind)
	}
}
