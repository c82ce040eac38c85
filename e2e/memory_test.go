package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
)

// TestMemoryTenTurns runs 10 consecutive 1,000-call turns on one daemon,
// each in a new session closed afterwards, and logs VmRSS, file
// descriptors and threads after each. It fails on a leak only: goroutines and
// descriptors must return to their baseline after every session/close, and the
// resident set after the last turn must stay within a wide margin of the
// one after the second (the first turns warm the heap up). A session's own
// history legitimately grows with its turns, which is why every turn gets
// a new session. No timing is asserted.
func TestMemoryTenTurns(t *testing.T) {
	f := readFixture(t, 1000)
	p := f.start(t)
	_, conn := p.leanClient(t)
	stats, base := initBaseline(t, conn)
	var rss []int64
	for turn := range 10 {
		sid := runTurn(t, conn, f.ws)
		if _, err := conn.CloseSession(callCtx(t, 30*time.Second), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
			t.Fatalf("session/close: %v", err)
		}
		expectBaseline(t, fmt.Sprintf("turn %d", turn+1), stats, base)
		kb, err := procStatusKB(p.pid(), "VmRSS")
		if err != nil {
			t.Fatal(err)
		}
		rss = append(rss, kb)
		t.Logf("turn %2d: VmRSS %6d kB, %d fds, %d threads", turn+1, kb, fdCount(p.pid()), threadCount(p.pid()))
	}
	// Wide margin: 50% or 32 MiB over the second turn, whichever is more.
	if limit := rss[1] + max(rss[1]/2, 32<<10); rss[9] > limit {
		t.Errorf("VmRSS grew from %d kB after turn 2 to %d kB after turn 10 (limit %d kB): a leak", rss[1], rss[9], limit)
	}
}
