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
// read). The content is read through one open sized by the stat: four
// system calls for a small file (stat, open, read, close) where
// [os.ReadFile] makes ten.
func ReadRegular(path string, limit int64) (fi fs.FileInfo, b []byte, err error) {
	fi, err = os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return fi, nil, err
	}
	f, err := openRead(path)
	if err != nil {
		return fi, nil, err
	}
	defer f.Close()
	// One byte more than the size: a file that grew since the stat is read
	// to its end all the same, up to limit.
	b = make([]byte, 0, fi.Size()+1)
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := Fill(f, b[len(b):cap(b)], fi.Size()-int64(len(b)))
		b = b[:len(b)+n]
		if err != nil {
			return fi, nil, err
		}
		if len(b) < cap(b) {
			return fi, b, nil // the end
		}
	}
	return fi, nil, nil // grew past limit while being read
}

// Fill reads r into buf until buf is full or r ends, as [io.ReadFull]
// does, but takes a read that stops exactly at size, where the file's stat
// said it ends, as the end: the read(2) that would only return 0 is not
// made. That is one system call of every small file read whole (the
// 1,000-call turn reads one or three a call). A file still growing is read
// on, and a read short of size (which a regular file only gives at its end)
// is followed by another. n < len(buf) means r ended.
func Fill(r io.Reader, buf []byte, size int64) (n int, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if m > 0 && int64(n) == size {
			return n, nil
		}
	}
	return n, nil
}
