package main

import "golang.org/x/sys/windows"

// On Windows the console's input mode decides echo (see echo_linux.go for
// what differs between the platforms).

// isTerminal reports whether fd is a console.
func isTerminal(fd int) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}

// echoOff stops the console from echoing what is typed, keeping line
// input and Ctrl+C, and returns what puts it back.
func echoOff(fd int) (restore func(), err error) {
	h := windows.Handle(fd)
	var old uint32
	if err := windows.GetConsoleMode(h, &old); err != nil {
		return nil, err
	}
	mode := old&^windows.ENABLE_ECHO_INPUT | windows.ENABLE_PROCESSED_INPUT | windows.ENABLE_LINE_INPUT
	if err := windows.SetConsoleMode(h, mode); err != nil {
		return nil, err
	}
	return func() { _ = windows.SetConsoleMode(h, old) }, nil
}
