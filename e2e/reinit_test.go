package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

var (
	raceOnce sync.Once
	raceBin  string
	raceErr  error
)

// raceDaemon builds dshd with the race detector (once per test binary).
func raceDaemon(t *testing.T) string {
	t.Helper()
	raceOnce.Do(func() {
		raceBin = filepath.Join(filepath.Dir(dshdBin), "dshd-race")
		raceErr = testsupport.GoBuild(raceBin, "./cmd/dshd", true)
	})
	if raceErr != nil {
		t.Fatalf("building dshd -race: %v", raceErr)
	}
	return raceBin
}

// TestFaultReinitializeRace sends initialize again and again while a turn
// asks for permissions, to a daemon built with the race detector. A client
// that re-initializes mid-session must not race the running turn (it once
// did: a second initialize rewrote the capabilities every session reads;
// now it is refused).
func TestFaultReinitializeRace(t *testing.T) {
	bin := raceDaemon(t)
	f := writeFixture(t, 50)
	env := append(f.env(), "GORACE=halt_on_error=1")
	p := startProc(t, bin, f.ws, env, f.args()...)
	c := &acptest.Client{Permission: acptest.AllowOnce}
	conn := p.client(t, c)
	stats, base := initBaseline(t, conn)
	sid := newSession(t, conn, f.ws)
	done := make(chan error, 1)
	go func() {
		_, err := prompt(context.Background(), conn, sid, "go")
		done <- err
	}()
	ctx := callCtx(t, time.Minute)
	for turnOver := false; !turnOver; {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the turn: %v", err)
			}
			turnOver = true
		default:
			// Accepting or refusing a second initialize are both fine.
			_, _ = conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}})
		}
	}
	if s := p.stderr.String(); strings.Contains(s, "DATA RACE") {
		t.Errorf("the daemon raced:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "out.txt")); err != nil {
		t.Errorf("the turn's writes did not happen: %v", err)
	}
	// The connection survived the initialize storm: what the session held
	// is freed when it closes.
	closeSession(t, conn, sid)
	expectBaseline(t, "reinitialize race", stats, base)
}
