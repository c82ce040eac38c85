//go:build unix

package main

import (
	"io"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// nonblocking reports fd's description's O_NONBLOCK.
func nonblocking(t *testing.T, fd int) bool {
	t.Helper()
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

func TestPollableStdio(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			if kind == "pipe" && runtime.GOOS != "linux" {
				t.Skip("a pipe is opened again only through Linux's /proc")
			}
			var fds [2]int
			var err error
			if kind == "pipe" {
				err = unix.Pipe(fds[:]) // blocking, as a spawned process gets it
			} else {
				fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			}
			if err != nil {
				t.Fatal(err)
			}
			r, w := fds[0], fds[1]
			writer := os.NewFile(uintptr(w), "editor")
			defer writer.Close()
			// shared stands for the editor's (or a shell's) copy of the
			// daemon's end: the same open file description.
			shared, err := unix.Dup(r)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(shared)
			f, restore := pollable(r, unix.O_RDONLY, "stdin")
			if f == nil {
				t.Fatal("the descriptor was not made pollable")
			}
			defer f.Close()
			if !nonblocking(t, r) {
				t.Error("the daemon's descriptor is still blocking")
			}
			if kind == "pipe" && nonblocking(t, shared) {
				t.Error("the shared description of the pipe was made non-blocking")
			}
			if _, err := writer.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 6)
			if _, err := io.ReadFull(f, buf); err != nil || string(buf) != "hello\n" {
				t.Fatalf("read %q, %v", buf, err)
			}
			restore()
			if kind == "socket" && nonblocking(t, shared) {
				t.Error("restore left the shared socket non-blocking")
			}
		})
	}
}

func TestPollableLeavesOtherFilesAlone(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := pollable(int(f.Fd()), unix.O_RDONLY, "stdin"); got != nil {
		t.Error("a regular file was replaced")
	}
	if nonblocking(t, int(f.Fd())) {
		t.Error("a regular file was made non-blocking")
	}
}
