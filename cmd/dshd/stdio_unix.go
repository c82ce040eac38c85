//go:build unix

package main

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// editorStdio returns the daemon's ends of the editor connection as files
// that Go's network poller waits on, and what puts back the one change it
// may make to a descriptor the editor shares.
//
// Go opens stdin and stdout in blocking mode, so a goroutine reading the
// editor's next message holds an OS thread, and with it one of the
// process's Ps, in read(2). While another goroutine waits in a system call
// too (the sandbox probe waits for its child at initialize), no P is left,
// and a runnable goroutine waits for the runtime's monitor to take one
// back, up to 20 ms: the initialize answer, written by the connection's
// flusher, waited 18 ms for exactly that. A pollable file parks the reader
// instead, holding nothing.
//
// The descriptors are not simply set non-blocking: O_NONBLOCK belongs to
// the open file description, which the process that started the daemon
// may share (a shell whose terminal or pipe would then fail with EAGAIN).
// A pipe, which editors such as Zed and Emacs give their agents, is opened
// again through /proc/self/fd, a new description of the same pipe that is
// the daemon's alone, and put in place of the inherited one. A socket
// (libuv, and so Neovim and Node, give socket pairs) cannot be opened
// again: it is set non-blocking, and restore sets it back before the
// daemon exits. A terminal or a file is left as it is.
func editorStdio() (in, out *os.File, restore func()) {
	in, out = os.Stdin, os.Stdout
	restoreIn, restoreOut := func() {}, func() {}
	if f, r := pollable(0, unix.O_RDONLY, in.Name()); f != nil {
		in, restoreIn = f, r
	}
	if f, r := pollable(1, unix.O_WRONLY, out.Name()); f != nil {
		out, restoreOut = f, r
	}
	return in, out, func() {
		restoreIn()
		restoreOut()
	}
}

// pollable returns a pollable file named name for descriptor fd, whose
// access mode is flag, and what undoes a change to a shared description;
// nil when fd is neither a pipe nor a socket, or cannot be made pollable.
func pollable(fd, flag int, name string) (*os.File, func()) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil
	}
	restore := func() {}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		// Only Linux's /proc opens a pipe again; elsewhere /dev/fd/N
		// duplicates the descriptor, description and all.
		if runtime.GOOS != "linux" {
			return nil, nil
		}
		// O_NONBLOCK also keeps the open from waiting for the other end.
		private, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), flag|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil
		}
		err = unix.Dup2(private, fd)
		_ = unix.Close(private)
		if err != nil {
			return nil, nil
		}
	case unix.S_IFSOCK:
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, nil
		}
		restore = func() { _ = unix.SetNonblock(fd, false) }
	default:
		return nil, nil
	}
	// A non-blocking descriptor makes os.NewFile's file pollable.
	return os.NewFile(uintptr(fd), name), restore
}
