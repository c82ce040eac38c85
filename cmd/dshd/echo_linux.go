package main

import "golang.org/x/sys/unix"

// What differs per platform in `dshd auth`'s terminal handling is the
// system call that reads and sets the terminal's modes: Linux calls them
// TCGETS and TCSETS (this file), macOS TIOCGETA and TIOCSETA
// (echo_darwin.go), Windows has console modes (echo_windows.go).

const (
	getTermios = unix.TCGETS
	setTermios = unix.TCSETS
)
