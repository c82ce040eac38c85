package testsupport

import (
	"testing"
	"time"
)

// ExitTimeout bounds how long [WaitExit] and [WaitGroupGone] wait before they
// fail the test: a failure deadline, generous for a loaded machine, never a
// decision that the process is gone.
const ExitTimeout = 30 * time.Second

// ExitedWithin waits until process pid has exited and reports whether it did
// within d. A zombie counts as exited (it runs nothing; in a container init
// may take its time to reap it). The kernel signals the exit (Linux: a
// pidfd), so nothing polls.
func ExitedWithin(pid int, d time.Duration) bool { return waitExit(pid, d) }

// GroupsGoneWithin waits until no live process of the groups pgids is left,
// waiting for each member's exit in turn, and reports whether that happened
// within d.
func GroupsGoneWithin(d time.Duration, pgids ...int) bool {
	deadline := time.Now().Add(d)
	for {
		live := InGroups(pgids...)
		if len(live) == 0 {
			return true
		}
		for _, p := range live {
			if !waitExit(p.PID, time.Until(deadline)) {
				return false
			}
		}
	}
}

// WaitExit is [ExitedWithin] that fails the test after ExitTimeout.
func WaitExit(t testing.TB, pid int) {
	t.Helper()
	if !waitExit(pid, ExitTimeout) {
		t.Fatalf("process %d still runs after %v", pid, ExitTimeout)
	}
}

// WaitGroupGone is [GroupsGoneWithin] that fails the test after ExitTimeout.
func WaitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	if !GroupsGoneWithin(ExitTimeout, pgid) {
		t.Fatalf("process group %d still has live members after %v: %v", pgid, ExitTimeout, InGroups(pgid))
	}
}
