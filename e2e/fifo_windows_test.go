package e2e

import (
	"testing"
	"time"
)

// readyFIFO: Windows has no FIFOs for a shell to write to; the scenarios
// that wait on one (their commands are bash) do not run there.
func readyFIFO(t testing.TB, _, _ string) string {
	t.Helper()
	t.Skip("the scenario waits on a FIFO, which Windows does not have")
	return ""
}

func waitFIFO(t testing.TB, _ string, _ time.Duration) string {
	t.Helper()
	t.Skip("the scenario waits on a FIFO, which Windows does not have")
	return ""
}
