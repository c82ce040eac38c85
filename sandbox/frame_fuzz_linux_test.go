//go:build linux

package sandbox

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzReadFrame holds the daemon's reader of a server's replies to a clear
// error (never a panic, never more than one frame) on any bytes.
func FuzzReadFrame(f *testing.F) {
	frame := func(body string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		return append(b, body...)
	}
	f.Add(frame(`{"id":1,"pid":42}`))
	f.Add(frame(`{"ready":true}`))
	f.Add(frame(`{"id":2,"status":256}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 9, '{'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var got reply
		if err := readFrame(r, &got); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(data)
		if int(n) > maxFrame || r.Len() != len(data)-4-int(n) {
			t.Fatalf("read a frame of %d bytes, leaving %d of %d", n, r.Len(), len(data))
		}
	})
}

// FuzzFrameReader holds the server's reader of requests to the same, over
// a real socket: whatever the daemon's end sends, a request or an error.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte(`{"op":"start","id":1,"path":"/bin/true","argv":["true"]}`), uint32(0))
	f.Add([]byte(`{"op":"wait","id":1}`), uint32(3))
	f.Add([]byte(`[`), uint32(1))
	f.Fuzz(func(t *testing.T, body []byte, lie uint32) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[0])
		size := uint32(len(body))
		if lie%4 == 3 {
			size += lie // a length the body does not have
		}
		msg := binary.BigEndian.AppendUint32(nil, size)
		msg = append(msg, body...)
		if len(msg) > 1<<16 {
			return
		}
		if _, err := unix.Write(fds[1], msg); err != nil {
			t.Fatal(err)
		}
		unix.Close(fds[1])
		var req request
		got, err := (&frameReader{fd: fds[0]}).read(&req)
		closeAll(got)
		if err == nil && size != uint32(len(body)) {
			t.Fatalf("a frame claiming %d bytes with %d decoded", size, len(body))
		}
	})
}
