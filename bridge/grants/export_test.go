package grants

import "time"

// SetClock makes s read the time from now (the recheck interval and the
// names of damaged copies).
func SetClock(s *Store, now func() time.Time) { s.now = now }
