package openfile

import (
	"io"
	"io/fs"
	"os"
)

// ReadRegular returns path's file information (following symlinks, as
// [os.Stat] does) and, when it is a regular file of at most limit bytes,
// its content. A file that is not regular is not opened (a FIFO would
// block, a device may act on being opened), and a larger one is not read:
// b is nil for both (also for a file that grew past limit while being
// read). The content is read through one open
// sized by the stat: six system calls for a small file where
// [os.ReadFile] makes ten.
func ReadRegular(path string, limit int64) (fi fs.FileInfo, b []byte, err error) {
	fi, err = os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return fi, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|Nonblock, 0)
	if err != nil {
		return fi, nil, err
	}
	defer f.Close()
	// One byte more than the size sees the end in the same read; a file
	// that grew since the stat is read to its end all the same, up to
	// limit.
	b = make([]byte, 0, fi.Size()+1)
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return fi, b, nil
		}
		if err != nil {
			return fi, nil, err
		}
	}
	return fi, nil, nil // grew past limit while being read
}
