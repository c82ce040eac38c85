package bridge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// TestOutboxGroupCommit: posts made while a flush is writing wait for the
// next one, which writes them all in one batch, in the order they were
// posted; every flushThrough returns only after its post was written.
func TestOutboxGroupCommit(t *testing.T) {
	var (
		mu      sync.Mutex
		batches [][]string
		written = map[string]bool{}
	)
	firstWriting, releaseFirst := make(chan struct{}), make(chan struct{})
	b := newOutbox(func(batch []outgoing) {
		var names []string
		for _, o := range batch {
			names = append(names, string(o.update))
		}
		mu.Lock()
		batches = append(batches, names)
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(firstWriting)
			<-releaseFirst
		}
		mu.Lock()
		for _, n := range names {
			written[n] = true
		}
		mu.Unlock()
	})
	checkWritten := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		if !written[name] {
			t.Errorf("flushThrough of %s returned before it was written", name)
		}
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		b.flushThrough(b.post(outgoing{update: json.RawMessage("a")}))
		checkWritten("a")
	})
	<-firstWriting
	// Seven posts while "a" is being written, in a known order; their
	// flushes wait for it.
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("p%d", i)
		want = append(want, name)
		seq := b.post(outgoing{update: json.RawMessage(name)})
		wg.Go(func() {
			b.flushThrough(seq)
			checkWritten(name)
		})
	}
	close(releaseFirst)
	wg.Wait()
	if len(batches) != 2 || !slices.Equal(batches[0], []string{"a"}) || !slices.Equal(batches[1], want) {
		t.Fatalf("batches %v; want [a] then %v in one", batches, want)
	}
	b.flushThrough(0) // nothing to wait for
}

// TestWriteBatchLogsBeforeSending: a batch's records, each post's own
// before its update's, reach the log in one call before any update of the
// batch is sent; live updates (not logged) and records alone keep their
// places; without a log the updates are sent all the same.
func TestWriteBatchLogsBeforeSending(t *testing.T) {
	rec := func(kind string) sessionlog.Entry {
		return sessionlog.Entry{Kind: kind, Payload: json.RawMessage(`{}`)}
	}
	batch := []outgoing{
		{update: json.RawMessage(`"announce"`), logged: true},
		{records: []sessionlog.Entry{rec("tool/call"), rec("tool/result")}, update: json.RawMessage(`"completed"`), logged: true},
		{update: json.RawMessage(`"live"`)},
		{records: []sessionlog.Entry{rec("tool/call")}},
	}
	var events []string
	logAll := func(recs []sessionlog.Entry) {
		var kinds []string
		for _, r := range recs {
			k := r.Kind
			if k == evUpdate {
				k += ":" + string(r.Payload.(json.RawMessage))
			}
			kinds = append(kinds, k)
		}
		events = append(events, "log["+strings.Join(kinds, " ")+"]")
	}
	send := func(u json.RawMessage) { events = append(events, "send:"+string(u)) }

	buf := writeBatch(batch, nil, logAll, send)
	want := []string{
		`log[update:"announce" tool/call tool/result update:"completed" tool/call]`,
		`send:"announce"`, `send:"completed"`, `send:"live"`,
	}
	if !slices.Equal(events, want) {
		t.Fatalf("events\n%q\nwant\n%q", events, want)
	}
	if len(buf) != 0 || cap(buf) == 0 {
		t.Errorf("the returned buffer has length %d, capacity %d; want an empty buffer to reuse", len(buf), cap(buf))
	}

	events = nil
	writeBatch(batch, nil, nil, send)
	if want := []string{`send:"announce"`, `send:"completed"`, `send:"live"`}; !slices.Equal(events, want) {
		t.Fatalf("without a log: %q, want %q", events, want)
	}
}
