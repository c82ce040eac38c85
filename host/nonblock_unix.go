//go:build unix

package host

import "syscall"

// openNonblock is O_NONBLOCK, with which the landings are opened. It
// changes nothing for a regular file, and it spares each open the four
// fcntl calls with which package os would otherwise make the descriptor
// non-blocking and back once epoll refused a regular file (a thousand
// reads a turn, two opens each). A FIFO swapped in after the check opens
// without blocking, too.
const openNonblock = syscall.O_NONBLOCK
