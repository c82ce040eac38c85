//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

func TestBashCancel(t *testing.T) {
	hs := newHarness(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(hs.ctx)
	hs.ctx = ctx
	done := make(chan registry.Result)
	go func() { done <- hs.run("bash", map[string]any{"command": "echo $$; sleep 60"}) }()
	pgid := waitLine(t, &hs.h.progress)
	cancel()
	r := <-done
	if !r.IsError || r.Error.Code != registry.CodeCancelled {
		t.Errorf("cancelled result %+v", r)
	}
	groupGone(t, atoi(t, pgid))
}

func TestBashBackground(t *testing.T) {
	jobs := NewJobs(0)
	defer jobs.Close()
	hs := newHarness(t, t.TempDir(), Options{Jobs: jobs})
	r := hs.run("bash", map[string]any{"command": "echo hello; sleep 0.1; echo bye", "runInBackground": true})
	if !strings.HasPrefix(text(r), "Started in the background with id bash_") {
		t.Fatalf("start %q", text(r))
	}
	id := strings.Fields(text(r))[6]
	id = strings.TrimSuffix(id, ".")
	r = hs.run("bash_output", map[string]any{"id": id, "wait": 10})
	if text(r) != "hello\nbye\n[ended: exit code 0]" {
		t.Errorf("output %q", text(r))
	}
	if r := hs.run("bash_output", map[string]any{"id": id}); !r.IsError {
		t.Error("finished job still readable after its last read")
	}
	// The job says it runs by writing its pid into a FIFO, which the test
	// reads: an explicit signal instead of polling bash_output.
	fifo := filepath.Join(hs.h.Cwd(), "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r = hs.run("bash", map[string]any{"command": "echo $$ > ready; sleep 60", "runInBackground": true})
	id = strings.TrimSuffix(strings.Fields(text(r))[6], ".")
	pid, err := os.ReadFile(fifo) // blocks until the job has written and closed it
	if err != nil {
		t.Fatal(err)
	}
	first := strings.TrimSpace(string(pid))
	r = hs.run("bash_kill", map[string]any{"id": id})
	if !strings.Contains(text(r), "[ended: killed by SIGTERM]") {
		t.Errorf("kill %q", text(r))
	}
	groupGone(t, atoi(t, first))

	other := newHarness(t, t.TempDir(), Options{Jobs: jobs})
	other.h.session = "sess-2"
	r = hs.run("bash", map[string]any{"command": "sleep 60", "runInBackground": true})
	id = strings.TrimSuffix(strings.Fields(text(r))[6], ".")
	if r := other.run("bash_kill", map[string]any{"id": id}); !r.IsError {
		t.Error("another session killed the job")
	}
	noJobs := newHarness(t, t.TempDir(), Options{})
	if r := noJobs.run("bash", map[string]any{"command": "true", "runInBackground": true}); !r.IsError {
		t.Error("background without a job table")
	}
}
