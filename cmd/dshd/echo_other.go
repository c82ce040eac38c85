//go:build !linux && !darwin && !windows

package main

import "errors"

// Elsewhere `dshd auth` reads from a terminal as from a pipe: the key
// shows as it is typed.

func isTerminal(int) bool { return false }

func echoOff(int) (func(), error) { return nil, errors.ErrUnsupported }
