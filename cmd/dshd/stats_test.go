package main

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// TestReadStats: every count is plausible for this very process, and an
// opened file shows in the descriptor count.
func TestReadStats(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc on this platform: fds and threads are -1 by design")
	}
	before := mustStats(t)
	if before.Goroutines < 1 || before.FDs < 3 || before.Threads < 1 || before.HeapBytes == 0 {
		t.Fatalf("implausible stats %+v", before)
	}
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	during := mustStats(t)
	f.Close()
	after := mustStats(t)
	if during.FDs != before.FDs+1 || after.FDs != before.FDs {
		t.Fatalf("fds before %d, with a file open %d, after closing it %d", before.FDs, during.FDs, after.FDs)
	}
	// The goroutine count is the runtime's own.
	if g := runtime.NumGoroutine(); after.Goroutines > g+2 || after.Goroutines < g-2 {
		t.Fatalf("goroutines %d, runtime says %d", after.Goroutines, g)
	}
}

func mustStats(t *testing.T) stats {
	t.Helper()
	v, err := readStats(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.(stats)
}

// TestStatsOverTheWire calls _dshd/stats on the real binary.
func TestStatsOverTheWire(t *testing.T) {
	ctx := testContext(t)
	cwd := t.TempDir()
	p := start(t, cwd, "--state-dir", t.TempDir())
	if _, err := p.conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}}); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := p.conn.Call(ctx, statsMethod, struct{}{}, &raw); err != nil {
		t.Fatalf("%s: %v", statsMethod, err)
	}
	var fields map[string]json.Number
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("%s answered %s: %v", statsMethod, raw, err)
	}
	for _, k := range []string{"goroutines", "fds", "threads", "heapBytes"} {
		n, err := fields[k].Int64()
		if err != nil || n == 0 || (n < 0 && k != "fds" && k != "threads") {
			t.Errorf("%s: %s = %q in %s", statsMethod, k, fields[k], raw)
		}
	}
	if len(fields) != 4 {
		t.Errorf("%s answered %s: want exactly goroutines, fds, threads, heapBytes", statsMethod, raw)
	}
	p.stop(t)
}
