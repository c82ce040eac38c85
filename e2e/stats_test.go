package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/work"
)

// statsMethod is dshd's diagnostic extension request (cmd/dshd/stats.go).
const statsMethod = "_dshd/stats"

// restTimeout bounds the daemon's wait for its counted work to end; it
// only bounds a failure: the daemon answers as soon as the work has ended.
const restTimeout = 60 * time.Second

// restParams ask _dshd/stats to answer once the daemon is at rest, with
// its parked goroutines.
var restParams = map[string]any{"restTimeoutMs": restTimeout.Milliseconds()}

// statsReader reads _dshd/stats, at rest, over one connection: counts the
// daemon takes of itself, so they are read over a scenario's own
// connection, in protocol order, with no race against /proc of another
// process.
type statsReader func() (work.Stats, error)

// connStats reads the stats over an acp client connection.
func connStats(conn *acp.AgentConn) statsReader {
	return func() (work.Stats, error) {
		ctx, cancel := context.WithTimeout(context.Background(), restTimeout+10*time.Second)
		defer cancel()
		var s work.Stats
		if err := conn.Call(ctx, statsMethod, restParams, &s); err != nil {
			return s, fmt.Errorf("%s: %w", statsMethod, err)
		}
		return s, nil
	}
}

var statsIDs atomic.Int64

// stats reads the stats over the raw wire; each request is one the
// daemon must answer exactly once, like any other.
func (c *wire) stats() statsReader {
	return func() (work.Stats, error) {
		id := fmt.Sprintf(`"stats-%d"`, statsIDs.Add(1))
		ch, err := c.request(id, statsMethod, restParams, false)
		if err != nil {
			return work.Stats{}, err
		}
		select {
		case m := <-ch:
			var s work.Stats
			if m.Error != nil {
				return s, fmt.Errorf("%s: %d %s", statsMethod, m.Error.Code, m.Error.Message)
			}
			return s, json.Unmarshal(m.Result, &s)
		case <-time.After(restTimeout + 10*time.Second):
			return work.Stats{}, fmt.Errorf("%s (id %s) never answered", statsMethod, id)
		}
	}
}

// statsBaseline takes the baseline of a quiet daemon: its stats once
// its counted work (the sandbox probe, ...) has ended.
func statsBaseline(t testing.TB, read statsReader) work.Stats {
	t.Helper()
	base, err := read()
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Work) > 0 {
		t.Fatalf("the daemon was not at rest for the baseline after %v: %v", restTimeout, base)
	}
	return base
}

// expectBaseline checks, once the daemon is at rest again, that nothing a
// scenario did is left: no counted work, the baseline's descriptors and no
// parked goroutine the baseline did not have (see work.Leaks). Teardown
// (a closed session's sandbox servers, its commands) ends after the
// response; the daemon answers when it has. Threads are logged only: the
// Go runtime keeps idle threads. It returns the stats read.
func expectBaseline(t testing.TB, scenario string, read statsReader, base work.Stats) work.Stats {
	t.Helper()
	now, err := read()
	if err != nil {
		t.Errorf("%s: reading the stats: %v", scenario, err)
		return now
	}
	if leaks := work.Leaks(base, now); len(leaks) > 0 {
		t.Errorf("%s: not back at the baseline:\n  %s\n  baseline %v\n  now      %v", scenario, strings.Join(leaks, "\n  "), base, now)
	} else {
		t.Logf("%s: back at the baseline (%v); now %v", scenario, base, now)
	}
	return now
}

// closeSession closes sid, so that what it held can be counted as freed.
func closeSession(t testing.TB, conn *acp.AgentConn, sid string) {
	t.Helper()
	if _, err := conn.CloseSession(callCtx(t, 30*time.Second), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatalf("session/close %s: %v", sid, err)
	}
}
