// Package testsupport holds what several packages' tests need alike: a
// buffer safe to read while another goroutine writes, building a binary of
// the module once per test package, and reading processes from /proc to
// prove that no command outlives what should have ended it. It is imported
// by tests only.
package testsupport
