//go:build deps && unix

package main

// dshd's sandbox and terminal echo use x/sys/unix on Unix (see deps.go).
import _ "golang.org/x/sys/unix"
