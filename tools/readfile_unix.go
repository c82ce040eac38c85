//go:build unix

package tools

import "syscall"

// readRegular reads a regular file of at most max bytes with three system
// calls (open, fstat, read) plus close: os.ReadFile's stat and poller
// registration double the cost of a search over many small files.
// O_NONBLOCK keeps a FIFO named by the caller from blocking the open; it
// changes nothing for regular files.
func readRegular(path string, max int64, buf *[]byte) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > max {
		return nil, false
	}
	// One byte more than the size notices a file that grew meanwhile.
	if int64(cap(*buf)) < st.Size+1 {
		*buf = make([]byte, st.Size+1+st.Size/4)
	}
	b := (*buf)[:st.Size+1]
	n := 0
	for n < len(b) {
		k, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if k == 0 {
			break
		}
		n += k
	}
	if int64(n) > max {
		return nil, false
	}
	return b[:n], true
}
