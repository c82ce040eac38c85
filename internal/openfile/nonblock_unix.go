//go:build unix

package openfile

import "syscall"

// Nonblock is O_NONBLOCK. It changes nothing for a regular file, and it
// spares each open the four fcntl calls with which package os would
// otherwise make the descriptor non-blocking and back once epoll refused
// a regular file (a thousand reads a turn, several opens each). A FIFO
// swapped in after a check opens without blocking, too.
const Nonblock = syscall.O_NONBLOCK
