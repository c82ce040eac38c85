package sessionlog

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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

// runChild appends numbered records forever, syncing every few records
// and announcing each completed Sync on stdout, until it is killed.
func runChild(dir string) {
	l, err := Create(dir, Header{SessionID: "killed", Cwd: "/w"})
	if err != nil {
		os.Exit(2)
	}
	text := strings.Repeat("payload ", 300) // records straddle buffer flushes
	for i := 0; ; i++ {
		if err := l.Append(KindUpdate, map[string]any{"seq": i, "text": text}); err != nil {
			os.Exit(3)
		}
		if i%7 == 6 {
			if err := l.Sync(); err != nil {
				os.Exit(4)
			}
			os.Stdout.WriteString("synced\n")
		}
	}
}

// TestSIGKILL kills a process that is appending as fast as it can, then
// checks that a new Open loads every synced record, in order, and that
// appending afterwards works.
func TestSIGKILL(t *testing.T) {
	captureWarnings(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for a few Syncs, then kill it mid-flight.
	buf := make([]byte, 0, 256)
	chunk := make([]byte, 64)
	for bytes.Count(buf, []byte("synced\n")) < 5 {
		n, err := stdout.Read(chunk)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		buf = append(buf, chunk[:n]...)
	}
	synced := 7 * bytes.Count(buf, []byte("synced\n"))
	time.Sleep(time.Millisecond) // let it get into the middle of something
	cmd.Process.Kill()
	cmd.Wait()

	l, err := Open(dir, "killed")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	records, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(records)-1 < synced {
		t.Fatalf("%d records survived, %d were synced", len(records)-1, synced)
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
