package pipeline

import (
	"hash/maphash"
	"sync"

	"github.com/dsh-tools/dshd/registry"
)

// maxBreakerKeys bounds the failure records kept per scope; past it the
// scope's records are dropped (the breaker forgets, it never over-refuses).
const maxBreakerKeys = 4096

// breaker is the circuit breaker of identical failing calls.
//
// A call's key is (scope, tool, canonical arguments); the arguments are
// hashed with a per-process seed (a collision would need 2^64 luck). Each
// failing outcome of a key counts one (every isError except CANCELLED: the
// user stopping a call says nothing about the call); a success resets the
// key. When a key has failed threshold times, the next identical call is
// refused without running — and the refusal resets the count ("half
// open"), so a model that ignores the feedback gets threshold more tries
// before the next refusal. Calls rejected before the arguments were
// materialised (unknown tool, invalid JSON) are not counted.
type breaker struct {
	threshold int
	seed      maphash.Seed
	scopes    sync.Map // scope → *scopeFailures
}

type scopeFailures struct {
	mu    sync.Mutex
	fails map[uint64]int
}

func newBreaker(threshold int) breaker {
	return breaker{threshold: threshold, seed: maphash.MakeSeed()}
}

func (b *breaker) key(tool, args string) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seed)
	h.WriteString(tool)
	h.WriteByte(0)
	h.WriteString(args)
	return h.Sum64()
}

// refuse reports whether the call must be refused, and if so resets it.
func (b *breaker) refuse(scope string, key uint64) bool {
	if b.threshold <= 0 {
		return false
	}
	v, ok := b.scopes.Load(scope)
	if !ok {
		return false
	}
	s := v.(*scopeFailures)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails[key] >= b.threshold {
		delete(s.fails, key)
		return true
	}
	return false
}

// record counts the outcome of a call that was not refused.
func (b *breaker) record(scope string, key uint64, r registry.Result) {
	if b.threshold <= 0 {
		return
	}
	failed := r.IsError && (r.Error == nil || r.Error.Code != registry.CodeCancelled)
	v, ok := b.scopes.Load(scope)
	if !ok {
		if !failed {
			return // the common case: nothing to reset, no lock taken
		}
		v, _ = b.scopes.LoadOrStore(scope, &scopeFailures{fails: map[uint64]int{}})
	}
	s := v.(*scopeFailures)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !failed:
		delete(s.fails, key)
	case len(s.fails) >= maxBreakerKeys && s.fails[key] == 0:
		clear(s.fails)
		s.fails[key] = 1
	default:
		s.fails[key]++
	}
}

func (b *breaker) forget(scope string) { b.scopes.Delete(scope) }
