package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// TestFaultKill9Orphans kills the daemon's process group with SIGKILL, as
// Zed does on disconnect, while a command runs in the foreground and one in
// the background. The daemon gets no chance to clean up, so its commands
// (each in a process group of its own) must die with it by other means
// (for example a parent-death signal): none may survive. Today the
// parent-death signal (tools/procattr_linux.go) reaches bash only, so the
// sleep of a compound command outlives the daemon, orphaned.
func TestFaultKill9Orphans(t *testing.T) {
	if !knownBug(t, "a SIGKILLed daemon leaves the grandchildren of its commands running: Pdeathsig kills bash only, and the command's own process group is out of reach of the editor's group kill") {
		return
	}
	f := newFixture(t, script{Turns: []turn{{Responses: []response{
		{ToolCalls: []toolCall{
			{ID: "bg", Name: "bash", Arguments: map[string]any{"command": "sleep 31", "runInBackground": true}},
			// A compound command: bash stays the parent of its sleep,
			// which a parent-death signal on bash alone would not reach.
			{ID: "fg", Name: "bash", Arguments: map[string]any{"command": "sleep 33; echo after"}},
		}},
		{Text: "never"},
	}}}})
	p := f.start(t)
	c := &acptest.Client{Permission: acptest.AllowOnce}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})
	go func() { _, _ = prompt(context.Background(), conn, sid, "go") }()
	if !eventually(10*time.Second, func() bool {
		n := 0
		for _, d := range descendants(p.pid()) {
			if d.comm == "sleep" {
				n++
			}
		}
		return n == 2
	}) {
		t.Fatal("the commands never started")
	}
	pgids := map[int]bool{}
	for _, d := range descendants(p.pid()) {
		pgids[d.pgid] = true
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // the daemon's group (Setpgid: its pid)
	<-p.exited
	if !eventually(3*time.Second, func() bool { return len(inGroups(pgids)) == 0 }) {
		left := inGroups(pgids)
		t.Errorf("%d processes outlived the daemon: %+v", len(left), left)
		for _, l := range left {
			_ = syscall.Kill(-l.pgid, syscall.SIGKILL) // leave nothing behind
		}
	}
}
