//go:build unix

package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// TestFaultKill9Orphans kills the daemon's process group with SIGKILL, as
// Zed does on disconnect, while a command runs in the foreground and one in
// the background. The daemon gets no chance to clean up, so its commands
// (each in a process group of its own) must die with it by other means
// (a watchdog in each command's group that kills the group when the
// daemon's end of its pipe closes): none may survive, not even the sleep of
// a compound command, which a parent-death signal on bash alone misses.
func TestFaultKill9Orphans(t *testing.T) {
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
		for _, d := range testsupport.Descendants(p.pid()) {
			if d.Comm == "sleep" {
				n++
			}
		}
		return n == 2
	}) {
		t.Fatal("the commands never started")
	}
	var pgids []int
	for _, d := range testsupport.Descendants(p.pid()) {
		pgids = append(pgids, d.PGID)
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // the daemon's group (Setpgid: its pid)
	<-p.exited
	if !eventually(3*time.Second, func() bool { return len(testsupport.InGroups(pgids...)) == 0 }) {
		left := testsupport.InGroups(pgids...)
		t.Errorf("%d processes outlived the daemon: %+v", len(left), left)
		for _, l := range left {
			_ = syscall.Kill(-l.PGID, syscall.SIGKILL) // leave nothing behind
		}
	}
}
