package testsupport

import "sync"

// Repeat calls f over and over on n goroutines (worker 0 to n-1), each
// until f returns false or stop is called; stop waits for all of them to
// end. Tests under -race use it to run readers while a writer changes what
// they read.
func Repeat(n int, f func(worker int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if !f(w) {
					return
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
