//go:build unix

package openfile

import (
	"io"
	"io/fs"
	"syscall"
)

// openRead opens path for reading as a bare descriptor. An [os.File] of a
// regular file costs Linux one more system call: package os offers every
// descriptor it opens to epoll, which refuses regular files.
func openRead(path string) (io.ReadCloser, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|Nonblock, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &rawFile{fd: fd, path: path}, nil
	}
}

// rawFile is a descriptor read with read(2) and closed with close(2).
type rawFile struct {
	fd   int
	path string
}

func (f *rawFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }
