//go:build unix

package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		cmd      Command
		output   string
		exit     int // -1: no exit code expected
		signal   string
		timedOut bool
	}{
		{"stdout and stderr", Command{Line: "echo out; echo err >&2"}, "out\nerr\n", 0, "", false},
		{"exit code", Command{Line: "exit 3"}, "", 3, "", false},
		{"cwd", Command{Line: "pwd", Dir: dir}, dir + "\n", 0, "", false},
		{"stdin is empty", Command{Line: "cat; echo done"}, "done\n", 0, "", false},
		{"signal", Command{Line: "kill -TERM $$"}, "", -1, "SIGTERM", false},
		// The timeout leaves bash time to print "start" even on a loaded
		// machine (100 ms was missed there): the output before the kill is kept.
		{"timeout", Command{Line: "echo start; sleep 30", Timeout: 2 * time.Second}, "start\n", -1, "SIGKILL", true},
		{"env replaced", Command{Line: "echo ${FOO:-unset}", Env: []string{"FOO=bar"}}, "bar\n", 0, "", false},
		// EOF on the output is not the end of the command: coreutils close
		// stdout in an exit handler, and the watchdog must not be retired
		// (which kills the group) before the command was reaped.
		{"closes its output before exiting", Command{Line: "echo bye; exec >&- 2>&-; sleep 0.3; exit 5"}, "bye\n", 5, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if o.Output != tt.output {
				t.Errorf("output %q, want %q", o.Output, tt.output)
			}
			if tt.exit >= 0 && (o.ExitCode == nil || *o.ExitCode != tt.exit) {
				t.Errorf("exit %v, want %d", o.ExitCode, tt.exit)
			}
			if tt.exit < 0 && o.ExitCode != nil {
				t.Errorf("exit %d, want none", *o.ExitCode)
			}
			if o.Signal != tt.signal || o.TimedOut != tt.timedOut {
				t.Errorf("signal %q timedOut %v, want %q %v", o.Signal, o.TimedOut, tt.signal, tt.timedOut)
			}
		})
	}
}

func TestRunOutputCap(t *testing.T) {
	o, err := Run(context.Background(), Command{Line: "echo BEGIN; head -c 100000 /dev/zero | tr '\\0' x; echo; echo END", OutputLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Truncated || !strings.HasPrefix(o.Output, "BEGIN\n") || !strings.HasSuffix(o.Output, "END\n") || !strings.Contains(o.Output, "bytes of output omitted") {
		t.Errorf("capped output %q (truncated %v)", o.Output, o.Truncated)
	}
	if len(o.Output) > 200 {
		t.Errorf("capped output is %d bytes", len(o.Output))
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for _, s := range []string{"abc", "defgh", "ijklmnop", "qrs"} {
		h.Write([]byte(s))
	}
	got, trunc := h.String()
	// 19 bytes written: the head keeps 5, the tail the last 5, 9 dropped.
	if want := "abcde\n[… 9 bytes of output omitted …]\nopqrs"; got != want || !trunc {
		t.Errorf("got %q, want %q", got, want)
	}
}

// waitLine waits for the first full line a command printed.
func waitLine(t *testing.T, b *testsupport.SyncBuffer) string {
	t.Helper()
	out := b.WaitFor(t, 30*time.Second, "line from the command", func(s string) bool { return strings.Contains(s, "\n") })
	return out[:strings.IndexByte(out, '\n')]
}

// groupGone waits until no live process of the group is left.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	testsupport.WaitGroupGone(t, pgid)
}

func TestRunCancelKillsGroup(t *testing.T) {
	// Grandchildren in the background and in a subshell: all must die.
	cancelKillsGroup(t, Command{Line: "echo $$; sleep 60 & (sleep 60; echo never) & sleep 60; wait"})
}

// cancelKillsGroup runs c, whose first line of output is its process
// group id, cancels it and checks that it was killed with everything in
// its group.
func cancelKillsGroup(t *testing.T, c Command) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	live := &testsupport.SyncBuffer{}
	c.Live = live
	done := make(chan *Outcome)
	go func() {
		o, err := Run(ctx, c)
		if err != nil {
			t.Error(err)
		}
		done <- o
	}()
	pgid, err := strconv.Atoi(strings.TrimSpace(waitLine(t, live)))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	o := <-done
	if !o.Cancelled || o.Signal != "SIGKILL" {
		t.Errorf("outcome %+v", o)
	}
	groupGone(t, pgid)
}

func TestRunKillsStragglers(t *testing.T) {
	o, err := Run(context.Background(), Command{Line: "echo $$; sleep 60 >/dev/null 2>&1 &"})
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(o.Output))
	if err != nil {
		t.Fatal(err)
	}
	groupGone(t, pgid)
}

func TestJobs(t *testing.T) {
	js := NewJobs(0)
	defer js.Close()
	id, err := js.Start("s1", Command{Line: "echo one; read -t 0.2 x </dev/zero || sleep 0.2; echo two; exit 4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Read("s2", id); !errors.Is(err, ErrNoJob) {
		t.Errorf("another session read the job: %v", err)
	}
	ended, err := js.Wait(context.Background(), "s1", id, 10*time.Second)
	if err != nil || !ended {
		t.Fatalf("wait: %v %v", ended, err)
	}
	st, err := js.Read("s1", id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running || st.Output != "one\ntwo\n" || st.Ended.ExitCode == nil || *st.Ended.ExitCode != 4 {
		t.Errorf("status %+v", st)
	}
	if _, err := js.Read("s1", id); !errors.Is(err, ErrNoJob) {
		t.Error("finished job not forgotten after its last read")
	}
}

// readAfterChange waits for the next change of session's job id (new
// output, or its end) and reads the job.
func readAfterChange(t *testing.T, js *Jobs, session, id string) JobStatus {
	t.Helper()
	changed, err := js.Changed(session, id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second): // bounds a failure only
		t.Fatalf("job %s did not change within 30 s", id)
	}
	st, err := js.Read(session, id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestJobsIncrementalAndKill(t *testing.T) {
	js := NewJobs(0)
	defer js.Close()
	id, err := js.Start("s", Command{Line: "echo $$; while :; do read -r line <&3 || break; echo got $line; done 3< <(printf 'a\\nb\\n'; sleep 60)"})
	if err != nil {
		t.Fatal(err)
	}
	// Each read follows a change signal: new output, or the end.
	var all string
	for !strings.Contains(all, "got b") {
		st := readAfterChange(t, js, "s", id)
		if !st.Running {
			t.Fatalf("the job ended after %q: %+v", all, st)
		}
		all += st.Output
	}
	lines := strings.Split(strings.TrimSpace(all), "\n")
	if len(lines) != 3 || lines[1] != "got a" || lines[2] != "got b" {
		t.Fatalf("incremental output %q", all)
	}
	pgid, _ := strconv.Atoi(lines[0])
	st, err := js.Kill("s", id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running || st.Ended.Signal == "" {
		t.Errorf("after kill: %+v", st)
	}
	groupGone(t, pgid)
}

// TestJobsChangedAtTheEnd: a job's end is a change, and a finished job's
// channel is closed at once.
func TestJobsChangedAtTheEnd(t *testing.T) {
	js := NewJobs(0)
	defer js.Close()
	id, err := js.Start("s", Command{Line: "read -r x; exit 3"}) // no output; stdin is empty
	if err != nil {
		t.Fatal(err)
	}
	for {
		st := readAfterChange(t, js, "s", id)
		if !st.Running {
			if st.Ended.ExitCode == nil || *st.Ended.ExitCode != 3 || st.Output != "" {
				t.Errorf("ended %+v", st)
			}
			break
		}
	}
	if _, err := js.Changed("s", id); !errors.Is(err, ErrNoJob) {
		t.Errorf("Changed of a job read to its end: %v, want ErrNoJob", err)
	}
}

func TestJobsClose(t *testing.T) {
	js := NewJobs(0)
	var pgids []int
	for _, s := range []string{"a", "b"} {
		// The job says its pgid through a FIFO once its trap is set.
		fifo := filepath.Join(t.TempDir(), "pgid")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Start(s, Command{Line: "trap '' TERM; echo $$ > " + fifo + "; sleep 60 & sleep 60"}); err != nil {
			t.Fatal(err)
		}
		pgids = append(pgids, testsupport.ReadPID(t, fifo)) // returns once the job has written and closed it
	}
	js.CloseSession("a")
	groupGone(t, pgids[0])
	if err := syscall.Kill(-pgids[1], 0); err != nil {
		t.Errorf("session b's job died with session a: %v", err)
	}
	js.Close()
	groupGone(t, pgids[1])
	if _, err := js.Start("a", Command{Line: "true"}); !errors.Is(err, ErrJobsClosed) {
		t.Errorf("start after close: %v", err)
	}
}

func TestJobsDropOldOutput(t *testing.T) {
	js := NewJobs(10)
	defer js.Close()
	id, err := js.Start("s", Command{Line: "printf 0123456789abcdefghij"})
	if err != nil {
		t.Fatal(err)
	}
	js.Wait(context.Background(), "s", id, 10*time.Second)
	st, _ := js.Read("s", id)
	if st.Output != "abcdefghij" || st.Dropped != 10 {
		t.Errorf("got %q dropped %d", st.Output, st.Dropped)
	}
}

// A background job that closes its output keeps running until it exits.
func TestJobsOutputClosedBeforeExit(t *testing.T) {
	js := NewJobs(0)
	defer js.Close()
	id, err := js.Start("s", Command{Line: "echo bye; exec >&- 2>&-; sleep 0.3; exit 6"})
	if err != nil {
		t.Fatal(err)
	}
	if ended, err := js.Wait(context.Background(), "s", id, 10*time.Second); err != nil || !ended {
		t.Fatalf("wait: %v %v", ended, err)
	}
	st, err := js.Read("s", id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != "bye\n" || st.Ended.Signal != "" || st.Ended.ExitCode == nil || *st.Ended.ExitCode != 6 {
		t.Errorf("status %+v, ended %+v", st, st.Ended)
	}
}

// TestJobsCap is issue 14's finding 7: a session runs at most MaxJobs
// background commands; past the cap runInBackground answers with an error
// naming the settings key, and a command that ended frees its slot.
func TestJobsCap(t *testing.T) {
	jobs := NewJobs(0)
	defer jobs.Close()
	hs := newHarness(t, t.TempDir(), Options{Jobs: jobs, MaxJobs: 3})
	bg := map[string]any{"command": "sleep 30", "runInBackground": true}
	var ids []string
	for i := range 3 {
		r := hs.run("bash", bg)
		if r.IsError {
			t.Fatalf("job %d: %s", i, text(r))
		}
		ids = append(ids, fmt.Sprintf("bash_%d", i+1))
	}
	r := hs.run("bash", bg)
	if !r.IsError || !strings.Contains(text(r), "bash.maxBackgroundJobs") || !strings.Contains(text(r), "runs 3") {
		t.Fatalf("the 4th job: %v %s", r.IsError, text(r))
	}
	// Another session has its own cap.
	if _, err := jobs.StartCapped("other", Command{Line: "sleep 30"}, 3); err != nil {
		t.Errorf("another session: %v", err)
	}
	// bash_kill returns once the command ended (and forgets it).
	if r := hs.run("bash_kill", map[string]any{"id": ids[0]}); r.IsError {
		t.Fatalf("bash_kill: %s", text(r))
	}
	if r := hs.run("bash", bg); r.IsError {
		t.Errorf("after a job ended: %s", text(r))
	}
}
