package work

import (
	"context"
	"maps"
	"sync"
)

// tracked is the process's live work by kind. rest is closed while
// nothing is live and replaced when work starts again, so waiters need no
// polling.
var tracked = struct {
	mu    sync.Mutex
	kinds map[string]int
	total int
	rest  chan struct{}
}{kinds: map[string]int{}, rest: closed()}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Start counts one unit of work of kind until end is called (more than
// once is fine: only the first call counts).
func Start(kind string) (end func()) {
	tracked.mu.Lock()
	if tracked.total == 0 {
		tracked.rest = make(chan struct{})
	}
	tracked.total++
	tracked.kinds[kind]++
	tracked.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { stop(kind) }) }
}

func stop(kind string) {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	if tracked.kinds[kind]--; tracked.kinds[kind] == 0 {
		delete(tracked.kinds, kind)
	}
	if tracked.total--; tracked.total == 0 {
		close(tracked.rest)
	}
}

// Go runs f on a new goroutine, counted under kind until f returns.
func Go(kind string, f func()) {
	end := Start(kind)
	go func() {
		defer end()
		f()
	}()
}

// Live returns the work counted now, by kind; empty at rest.
func Live() map[string]int {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	return maps.Clone(tracked.kinds)
}

// Rest waits until no work is counted, or until ctx ends: then it returns
// what is still live with ctx's error.
func Rest(ctx context.Context) (map[string]int, error) {
	for {
		tracked.mu.Lock()
		rest, total := tracked.rest, tracked.total
		tracked.mu.Unlock()
		if total == 0 {
			return map[string]int{}, nil
		}
		select {
		case <-rest:
		case <-ctx.Done():
			return Live(), ctx.Err()
		}
	}
}
