package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
)

// statsMethod is dshd's diagnostic extension request (cmd/dshd/stats.go).
const statsMethod = "_dshd/stats"

// daemonStats is the answer to _dshd/stats: counts the daemon takes of
// itself, so they are read over a scenario's own connection, in protocol
// order, with no race against /proc of another process.
type daemonStats struct {
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	Threads    int    `json:"threads"`
	HeapBytes  uint64 `json:"heapBytes"`
}

func (s daemonStats) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, %d threads, %d KiB heap", s.Goroutines, s.FDs, s.Threads, s.HeapBytes>>10)
}

// statsReader reads _dshd/stats over one connection.
type statsReader func() (daemonStats, error)

// connStats reads the stats over an acp client connection.
func connStats(conn *acp.AgentConn) statsReader {
	return func() (daemonStats, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var s daemonStats
		if err := conn.Call(ctx, statsMethod, struct{}{}, &s); err != nil {
			return s, fmt.Errorf("%s: %w", statsMethod, err)
		}
		return s, nil
	}
}

var statsIDs atomic.Int64

// stats reads the stats over the raw wire; each request is one the
// daemon must answer exactly once, like any other.
func (c *wire) stats() statsReader {
	return func() (daemonStats, error) {
		id := fmt.Sprintf(`"stats-%d"`, statsIDs.Add(1))
		ch, err := c.request(id, statsMethod, struct{}{}, false)
		if err != nil {
			return daemonStats{}, err
		}
		select {
		case m := <-ch:
			var s daemonStats
			if m.Error != nil {
				return s, fmt.Errorf("%s: %d %s", statsMethod, m.Error.Code, m.Error.Message)
			}
			return s, json.Unmarshal(m.Result, &s)
		case <-time.After(10 * time.Second):
			return daemonStats{}, fmt.Errorf("%s (id %s) never answered", statsMethod, id)
		}
	}
}

// statsBaseline takes the baseline of a quiet daemon: it reads until two
// reads 50 ms apart agree on goroutines and descriptors, so that a
// goroutine still finishing the previous answer does not enter it.
func statsBaseline(t testing.TB, read statsReader) daemonStats {
	t.Helper()
	prev, err := read()
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		cur, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if cur.Goroutines == prev.Goroutines && cur.FDs == prev.FDs {
			return cur
		}
		prev = cur
	}
	t.Fatalf("the daemon never settled for a baseline: last %v", prev)
	return prev
}

// expectBaseline checks that the daemon's goroutines and file descriptors
// are back at base after a scenario. Teardown (a closed session's turn, its
// log, its commands) finishes asynchronously after the response, and a Go
// process has no signal for a goroutine's end, so it reads the stats again
// until they match: the counts decide, and the 30 s only bound a failure.
// The counts must be equal: the stats request itself runs on one
// goroutine, which the baseline counted too, and the runtime's own
// goroutines are not counted by runtime.NumGoroutine. Threads are logged
// only: the Go runtime keeps idle threads. It returns the stats last read.
func expectBaseline(t testing.TB, scenario string, read statsReader, base daemonStats) daemonStats {
	t.Helper()
	var last daemonStats
	var lastErr error
	back := false
	for deadline := time.Now().Add(30 * time.Second); !back && time.Now().Before(deadline); {
		last, lastErr = read()
		if lastErr != nil {
			break
		}
		back = last.Goroutines == base.Goroutines && last.FDs == base.FDs
		if !back {
			time.Sleep(20 * time.Millisecond) // paces the reads; decides nothing
		}
	}
	switch {
	case lastErr != nil:
		t.Errorf("%s: reading the stats: %v", scenario, lastErr)
	case !back:
		t.Errorf("%s: not back at the baseline after 30 s:\n  baseline %v\n  now      %v", scenario, base, last)
	default:
		t.Logf("%s: back at the baseline (%v); now %v", scenario, base, last)
	}
	return last
}

// closeSession closes sid, so that what it held can be counted as freed.
func closeSession(t testing.TB, conn *acp.AgentConn, sid string) {
	t.Helper()
	if _, err := conn.CloseSession(callCtx(t, 30*time.Second), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatalf("session/close %s: %v", sid, err)
	}
}
