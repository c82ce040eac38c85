//go:build linux

package sandbox

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestServerRefusingAFrameIsGone: a server whose socket refuses a request
// (it died: EPIPE) is gone at once, not only once its reader has noticed
// the end, so Start's retry gets a new server instead of the same dead
// one. (Under load the reader can be late; TestServerIsReplacedWhenItDies
// then failed with "broken pipe" on its retry.) Here no reader runs at all.
func TestServerRefusingAFrameIsGone(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := os.NewFile(uintptr(fds[0]), "sandbox-server")
	unix.Close(fds[1]) // the server's end: it died
	raw, err := ours.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{conn: ours, raw: raw, pending: map[uint64]chan reply{}}
	defer s.end()
	if !s.usable() {
		t.Fatal("a fresh server is not usable")
	}
	if _, err := s.call(request{Op: opWait, ID: 1}, nil); !errors.Is(err, errServerGone) {
		t.Fatalf("call to a dead server: %v, want errServerGone", err)
	}
	if s.usable() {
		t.Error("the server whose socket refused a frame is still handed out")
	}
	if _, err := s.call(request{Op: opWait, ID: 2}, nil); !errors.Is(err, errServerGone) {
		t.Errorf("second call: %v, want errServerGone", err)
	}
}
