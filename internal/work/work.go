package work

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// tracked is the process's live work by kind. Each waiter of Rest makes
// its own channel, which the end of the last work closes: Start and end
// make no channel, so they may run inside a testing/synctest bubble
// (a channel made there could not be closed outside it).
var tracked = struct {
	mu      sync.Mutex
	kinds   map[string]int
	total   int
	waiters []chan struct{}
}{kinds: map[string]int{}}

// Start counts one unit of work of kind until end is called (more than
// once is fine: only the first call counts).
func Start(kind string) (end func()) {
	tracked.mu.Lock()
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
		for _, w := range tracked.waiters {
			close(w)
		}
		tracked.waiters = nil
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
	tracked.mu.Lock()
	if tracked.total == 0 {
		tracked.mu.Unlock()
		return map[string]int{}, nil
	}
	rest := make(chan struct{})
	tracked.waiters = append(tracked.waiters, rest)
	tracked.mu.Unlock()
	select {
	case <-rest:
		return map[string]int{}, nil
	case <-ctx.Done():
		tracked.mu.Lock()
		tracked.waiters = slices.DeleteFunc(tracked.waiters, func(w chan struct{}) bool { return w == rest })
		tracked.mu.Unlock()
		return Live(), ctx.Err()
	}
}
