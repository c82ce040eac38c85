//go:build !unix

package host

// openNonblock: see nonblock_unix.go; elsewhere files open as os opens them.
const openNonblock = 0
