// Package testsupport holds what several packages' tests need alike: a
// buffer safe to read while another goroutine writes, building a binary of
// the module once per test package, running the test binary again as a
// child that plays a part ([StartSelf]), running readers on several
// goroutines while a writer works ([Repeat]), and reading processes (the
// pid a child wrote, [ReadPID]; /proc) to prove that no command outlives
// what should have ended it. It is imported by tests only.
//
// For example, a test that must see a process group end, or a line of a
// command's output, waits on a kernel or writer signal rather than a sleep:
//
//	live := &testsupport.SyncBuffer{}
//	// ... start a command writing to live ...
//	out := live.WaitFor(t, 30*time.Second, "its pid", func(s string) bool { return strings.Contains(s, "\n") })
//	testsupport.WaitGroupGone(t, pgid) // pidfd per member, no polling
package testsupport
