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
			// Each command says through a FIFO that its sleep runs.
			{ID: "bg", Name: "bash", Arguments: map[string]any{"command": "sleep 31 & echo > bg.ready; wait", "runInBackground": true}},
			// A compound command: bash stays the parent of its sleep,
			// which a parent-death signal on bash alone would not reach.
			{ID: "fg", Name: "bash", Arguments: map[string]any{"command": "sleep 33 & echo > fg.ready; wait; echo after"}},
		}},
		{Text: "never"},
	}}}})
	fifos := map[string]string{}
	for _, name := range []string{"bg.ready", "fg.ready"} {
		fifos[name] = readyFIFO(t, f.ws, name)
	}
	p := f.start(t)
	c := &acptest.Client{Permission: acptest.AllowOnce}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})
	go func() { _, _ = prompt(context.Background(), conn, sid, "go") }()
	for _, name := range []string{"bg.ready", "fg.ready"} {
		waitFIFO(t, fifos[name], 60*time.Second)
	}
	var pgids []int
	for _, d := range testsupport.Descendants(p.pid()) {
		pgids = append(pgids, d.PGID)
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // the daemon's group (Setpgid: its pid)
	<-p.exited
	if !testsupport.GroupsGoneWithin(30*time.Second, pgids...) {
		left := testsupport.InGroups(pgids...)
		t.Errorf("%d processes outlived the daemon: %+v", len(left), left)
		for _, l := range left {
			_ = syscall.Kill(-l.PGID, syscall.SIGKILL) // leave nothing behind
		}
	}
}
