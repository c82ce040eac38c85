// Package work keeps count of the daemon's work that outlives the request
// that started it (sandbox servers, background commands, the start-up
// probe, ...), so that a caller can wait, without polling, until all of it
// has ended, and then take the process's counts: goroutines, descriptors,
// threads and the goroutines that are parked.
//
// The fault suite uses it through dshd's `_dshd/stats` request: at rest,
// the descriptors and the parked goroutines must be those of the baseline.
// A goroutine on its way out after signalling its end is running or
// runnable, never parked, so the parked ones are exact at rest; a leaked
// goroutine is parked forever, so it shows. A long-lived goroutine can be
// running for a moment at rest too (a writer just after its last write):
// [TakeSettled] waits for it to park, so that a baseline has it.
//
//	work.Go("sandbox server", s.read) // counted until s.read returns
//	end := work.Start("terminal")     // counted until end is called
//	defer end()
//	...
//	live, err := work.Rest(ctx) // waits until nothing is counted (or ctx ends)
//	s := work.TakeSettled(ctx)  // counts, once every other goroutine has parked
//	problems := work.Leaks(base, s)
//
// The counts are process-wide, like the runtime's own: one daemon is one
// process.
package work
