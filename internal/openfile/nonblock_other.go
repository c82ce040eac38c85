//go:build !unix

package openfile

// Nonblock: see nonblock_unix.go; elsewhere files open as os opens them.
const Nonblock = 0
