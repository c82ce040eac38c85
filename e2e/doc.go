// Package e2e holds the end-to-end benchmarks and the fault suite of dshd. It
// has no API: every file but this one is a test.
//
// Run it like any package; the fault suite alone is make faults:
//
//	go test ./e2e/                                   # everything, with the daemon built once
//	go test -run 'Fault' -timeout 15m ./e2e/         # make faults
//	go test -run '^$' -bench Turn1000Calls ./e2e/    # the 1,000-call turn through the binary
//
// TestMain builds the real daemon (go build ./cmd/dshd) and a bare JSON echo
// process (./e2e/internal/echo) into a temporary directory; every test and
// benchmark then spawns them over real pipes, the way an editor does. The
// daemon runs with the script provider on scripts the tests write, with
// HOME, XDG_CONFIG_HOME and XDG_STATE_HOME pointed into the test's temporary
// directory so that no user settings leak in.
//
// The fault tests are named TestFault… (make faults runs them):
//
//   - TestFaultHostileClient: thousands of malformed, truncated, oversized
//     (16 MiB), out-of-order and unknown messages, responses to requests
//     never made, random cancels and prompts on busy sessions, while a
//     well-behaved session runs a turn on the same connection.
//   - TestFaultDisconnect: stdin closed, or the client killed, in the middle
//     of a turn, of a permission request and of a running command
//     (foreground or background).
//   - TestFaultKill9: SIGKILL of the daemon at random points of a turn, then
//     a new daemon loads and continues the session; its replay holds every
//     update the client had received, of a turn cut short too.
//   - TestFaultKill9Orphans: SIGKILL of the daemon's process group (what
//     Zed does) while commands run; none of their processes may survive.
//   - TestFaultReinitializeRace: initialize again during a turn, on a daemon
//     built with the race detector.
//   - TestFaultPolicy: arguments that try to escape the roots, rewrite the
//     daemon's own settings or state, chain commands past a remembered rule,
//     exceed size limits or smuggle duplicate keys, also in bypass mode
//     (TestFaultPolicyBypassRoots: root escapes in bypass mode).
//
// TestMemoryTenTurns checks for leaks over 10 consecutive 1,000-call turns.
//
// The benchmarks (BenchmarkStartup, BenchmarkSessionNew, BenchmarkTurn1000Calls,
// BenchmarkMemory) compare dshd with a same-run reference (sub-benchmarks;
// scripts/bench-table.sh prints the ratios). Their B/op and allocs/op are
// the test process's, i.e. the client's; the daemon's memory is the
// peak-RSS-MB metric read from /proc/<pid>/status.
//
// "Back to baseline" is checked with the daemon's diagnostic extension
// request _dshd/stats (stats_test.go), read over each scenario's own
// connection, at rest (the daemon answers once its counted work, see
// internal/work, has ended): after initialize for the baseline, then once
// the scenario's sessions are closed, with no work live, exactly the
// baseline's open file descriptors and no parked goroutine the baseline
// did not have (OS threads are logged only: the Go runtime keeps idle
// ones). One read each, no polling. Scenarios whose daemon exits (disconnects, kills) are
// checked in the daemon that loads or resumes the session afterwards.
//
// DSHD_E2E_RACE=1 builds the daemon with
// the race detector. DSHD_E2E_KILLS sets how many kill -9 rounds
// TestFaultKill9 runs (default 20, 5 with -short).
package e2e
