//go:build windows

package tools

import (
	"io"
	"os"
)

// readRegular reads a regular file of at most max bytes into *buf (grown
// as needed, as on Unix). Windows has no open-fstat-read shortcut worth
// taking (readfile_unix.go has one): the os package's calls are what a
// search does there.
func readRegular(path string, max int64, buf *[]byte) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > max {
		return nil, false
	}
	size := st.Size()
	// One byte more than the size notices a file that grew meanwhile.
	if int64(cap(*buf)) < size+1 {
		*buf = make([]byte, size+1+size/4)
	}
	b := (*buf)[:size+1]
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, false
	}
	if int64(n) > max {
		return nil, false
	}
	return b[:n], true
}
