package main

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/work"
)

// TestStatsOverTheWire calls _dshd/stats on the real binary: without
// params at once, with restTimeoutMs once the sandbox probe has ended
// (nothing is live) and with the parked goroutines; bad params are
// refused.
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
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("%s answered %s: %v", statsMethod, raw, err)
	}
	for _, k := range []string{"goroutines", "fds", "threads", "heapBytes"} {
		n, err := json.Number(fields[k]).Int64()
		if err != nil || n == 0 || (n < 0 && k != "fds" && k != "threads") {
			t.Errorf("%s: %s = %s in %s", statsMethod, k, fields[k], raw)
		}
	}
	if _, ok := fields["work"]; !ok || len(fields) != 5 {
		t.Errorf("%s answered %s: want exactly goroutines, fds, threads, heapBytes, work", statsMethod, raw)
	}

	var rest work.Stats
	if err := p.conn.Call(ctx, statsMethod, map[string]any{"restTimeoutMs": 60_000}, &rest); err != nil {
		t.Fatalf("%s at rest: %v", statsMethod, err)
	}
	if len(rest.Work) != 0 || len(rest.Parked) == 0 {
		t.Errorf("%s at rest: live work %v, parked goroutines %v; want none live, some parked", statsMethod, rest.Work, rest.Parked)
	}
	for _, bad := range []any{map[string]any{"restTimeoutMs": -1}, map[string]any{"restTimeoutMs": "soon"}} {
		var e *acp.Error
		if err := p.conn.Call(ctx, statsMethod, bad, nil); !errors.As(err, &e) || e.Code != acp.CodeInvalidParams {
			t.Errorf("%s %v: %v, want invalid params", statsMethod, bad, err)
		}
	}
	p.stop(t)
}
