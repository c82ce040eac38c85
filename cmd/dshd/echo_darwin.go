package main

import "golang.org/x/sys/unix"

// macOS reads and sets terminal modes with TIOCGETA and TIOCSETA (see
// echo_linux.go for what differs between the platforms).
const (
	getTermios = unix.TIOCGETA
	setTermios = unix.TIOCSETA
)
