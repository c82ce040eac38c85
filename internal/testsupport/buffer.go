package testsupport

import (
	"bytes"
	"sync"
)

// SyncBuffer is an io.Writer that a test may read (String) while commands,
// servers or loggers write to it from other goroutines. Limit, when
// positive, keeps only the first Limit bytes: a runaway writer must not eat
// the test's memory.
type SyncBuffer struct {
	Limit int

	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Limit > 0 && s.b.Len() > s.Limit {
		return len(p), nil
	}
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
