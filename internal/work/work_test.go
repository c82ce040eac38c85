package work

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
)

// atRest takes the stats once nothing is counted and every other
// goroutine has parked (under load, the test's own parent may not have
// yet: Take(true) then leaves it out of a baseline).
func atRest(t *testing.T) Stats {
	t.Helper()
	if live, err := Rest(t.Context()); err != nil {
		t.Fatalf("not at rest: %v %v", live, err)
	}
	return TakeSettled(t.Context())
}

// TestLeaksCatchAGoroutineAndADescriptor leaks a goroutine and a file on
// purpose: both show, and what ends shows nothing.
func TestLeaksCatchAGoroutineAndADescriptor(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: descriptors are not counted here")
	}
	base := atRest(t)
	if got := Leaks(base, atRest(t)); len(got) > 0 {
		t.Fatalf("nothing changed, yet: %q", got)
	}

	block := make(chan struct{})
	leaked := make(chan struct{})
	go leakedGoroutine(block, leaked)
	<-leaked
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	got := Leaks(base, atRest(t))
	if !slicesContain(got, "leakedGoroutine") || !slicesContain(got, "file descriptors open") || len(got) != 2 {
		t.Errorf("a goroutine and a file leaked, Leaks says %q", got)
	}

	close(block)
	f.Close()
	// The goroutine may still be on its way out: running or runnable,
	// so not parked.
	if got := Leaks(base, atRest(t)); len(got) > 0 {
		t.Errorf("all ended, yet: %q", got)
	}
}

func leakedGoroutine(block, started chan struct{}) {
	close(started)
	<-block
}

// TestRestWaitsForCountedWork: Rest returns when the last counted work
// ends, and, at its deadline, says what is still live.
func TestRestWaitsForCountedWork(t *testing.T) {
	release := make(chan struct{})
	Go("test worker", func() { <-release })
	end := Start("test resource")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	live, err := Rest(ctx)
	if err == nil || live["test worker"] != 1 || live["test resource"] != 1 {
		t.Fatalf("Rest past its deadline = %v, %v; want both kinds live", live, err)
	}
	if got := Leaks(Stats{FDs: -1}, Stats{FDs: -1, Work: live}); len(got) != 2 || !strings.Contains(got[0], "still live: 1 test resource") {
		t.Errorf("Leaks of live work = %q", got)
	}

	rested := make(chan map[string]int)
	go func() {
		live, _ := Rest(t.Context())
		rested <- live
	}()
	close(release)
	end()
	end() // a second end counts nothing
	if live := <-rested; len(live) != 0 {
		t.Errorf("at rest, live work %v", live)
	}
	if live := Live(); len(live) != 0 {
		t.Errorf("after Rest, live work %v", live)
	}
}

// TestTakeCounts: every count is plausible for this very process, and an
// opened file shows in the descriptor count.
func TestTakeCounts(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc on this platform: fds and threads are -1 by design")
	}
	before := Take(false)
	if before.Goroutines < 1 || before.FDs < 3 || before.Threads < 1 || before.HeapBytes == 0 || before.Parked != nil {
		t.Fatalf("implausible stats %+v", before)
	}
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	during := Take(false)
	f.Close()
	after := Take(false)
	if during.FDs != before.FDs+1 || after.FDs != before.FDs {
		t.Fatalf("fds before %d, with a file open %d, after closing it %d", before.FDs, during.FDs, after.FDs)
	}
	// The goroutine count is the runtime's own.
	if g := runtime.NumGoroutine(); after.Goroutines > g+2 || after.Goroutines < g-2 {
		t.Fatalf("goroutines %d, runtime says %d", after.Goroutines, g)
	}
}

// TestParkedGoroutines reads a stack dump's headers and creators.
func TestParkedGoroutines(t *testing.T) {
	dump := `goroutine 1 [running]:
main.main()
	/x/main.go:10 +0x1d

goroutine 7 [chan receive, 3 minutes]:
a.b()
	/x/a.go:1 +0x1
created by a.start in goroutine 1
	/x/a.go:9 +0x2

goroutine 8 [runnable]:
a.c()
created by a.start in goroutine 1

goroutine 9 [IO wait]:
internal/poll.runtime_pollWait()
created by os/exec.(*Cmd).Start in goroutine 7
`
	got := parkedGoroutines([]byte(dump))
	want := []Goroutine{{ID: 7, State: "chan receive", Func: "a.b", CreatedBy: "a.start"}, {ID: 9, State: "IO wait", Func: "internal/poll.runtime_pollWait", CreatedBy: "os/exec.(*Cmd).Start"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parkedGoroutines = %+v, want %+v", got, want)
	}
}

func slicesContain(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

// TestWorkInASynctestBubble: work started and ended inside a
// testing/synctest bubble (the bridge's tests run turns in bubbles) wakes
// a waiter outside it, and leaves nothing behind that outside code could
// not touch.
func TestWorkInASynctestBubble(t *testing.T) {
	hold := Start("outside")
	rested := make(chan map[string]int)
	go func() {
		live, _ := Rest(context.Background())
		rested <- live
	}()
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		Go("inside", func() { <-release })
		close(release)
		synctest.Wait()
	})
	hold() // the last end, outside the bubble
	if live := <-rested; len(live) != 0 {
		t.Errorf("at rest, live work %v", live)
	}
	var end func()
	synctest.Test(t, func(t *testing.T) { end = Start("inside") })
	end() // started inside the bubble, ended outside
	if live, err := Rest(t.Context()); err != nil || len(live) != 0 {
		t.Errorf("Rest after the bubble = %v, %v", live, err)
	}
}

// TestTakeSettledWaitsForARunningGoroutine: a goroutine that is running
// when the counts are asked for (a connection's writer just after a
// write) is in the counts once it has parked; Take(true) would have left
// it out, and a baseline taken so would later show it as new.
func TestTakeSettledWaitsForARunningGoroutine(t *testing.T) {
	stop, parked, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	running := make(chan struct{})
	go func() {
		close(running)
		for {
			select {
			case <-stop:
				close(parked)
				<-release
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	<-running
	defer close(release)

	// While it runs, TakeSettled gives up when ctx ends and leaves it out.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := TakeSettled(ctx); s.Goroutines-len(s.Parked) < 2 {
		t.Fatalf("%v: the spinning goroutine counted as parked", s)
	}
	// Once it is about to park, TakeSettled waits for it.
	close(stop)
	<-parked
	s := TakeSettled(t.Context())
	if s.Goroutines-len(s.Parked) != 1 {
		t.Fatalf("%v: more than the caller still running", s)
	}
	found := false
	for _, g := range s.Parked {
		found = found || g.State == "chan receive" && strings.Contains(g.CreatedBy, "TestTakeSettledWaitsForARunningGoroutine")
	}
	if !found {
		t.Fatalf("the goroutine, now parked on release, is not among %v", s.Parked)
	}
}
