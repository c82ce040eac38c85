package testsupport

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is an io.Writer that a test may read (String) while commands,
// servers or loggers write to it from other goroutines. Limit, when
// positive, keeps only the first Limit bytes: a runaway writer must not eat
// the test's memory.
type SyncBuffer struct {
	Limit int

	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next Write
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	if s.Limit > 0 && s.b.Len() > s.Limit {
		return len(p), nil
	}
	return s.b.Write(p)
}

// WaitFor waits until what was written so far satisfies ok and returns it.
// Every Write wakes it, so nothing polls; it fails the test after timeout
// (a failure deadline, never a decision that nothing more will come).
func (s *SyncBuffer) WaitFor(t testing.TB, timeout time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := s.b.String()
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if ok(got) {
			return got
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no %s after %v; got %q", what, timeout, got)
		}
	}
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
