package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/internal/atomicfile"
	"github.com/dsh-tools/dshd/internal/openfile"
)

// Landing is where one path argument of the running call lands, as the
// session's policy judged it (see [Host.Land]): the only path a tool may
// open for that argument. Its methods open it on the local disk beneath
// its root with [os.Root], so a symlink that appears along the way after
// the decision cannot redirect the access outside the root.
type Landing struct {
	// Written is the path as the call's arguments wrote it, for messages.
	Written string
	// Abs is where it lands: absolute, every existing symlink followed,
	// ".." applied after the symlinks before it.
	Abs string
	// Root is the session root (resolved) that holds Abs; empty when Abs
	// lies outside every root, which the policy let through only after its
	// own permission. Such a path is opened beneath the file system's root.
	Root string

	// head is where [Landing.Head] leaves a small file it read whole, so
	// that the [Landing.ReadText] that follows it in the same call (the
	// read tool's check, then its read) does not open the file again; nil
	// in a Landing written as a literal, which opens it every time.
	head *wholeFile
}

// wholeFile is a file's content as one Head read it, whole; taken once.
type wholeFile struct {
	mu      sync.Mutex
	content []byte // nil: nothing to take
}

// NewLanding is the landing of the path written as written at abs,
// beneath root (see the fields of [Landing]): what a host's Land returns.
// A tool's Head and ReadText of it share one reading of a small file.
func NewLanding(written, abs, root string) Landing {
	return Landing{Written: written, Abs: abs, Root: root, head: &wholeFile{}}
}

// take returns the content a Head left, once; nil when there is none.
func (w *wholeFile) take() []byte {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.content
	w.content = nil
	return b
}

// ErrNotLanded is the error of an access to a path that the session's
// policy did not land for the running call.
var ErrNotLanded = errors.New("the path was not judged by the session's policy for this call")

// root opens the landing's root and returns it with the landing's path
// relative to it.
func (l Landing) root() (*os.Root, string, error) {
	if l.Abs == "" || !filepath.IsAbs(l.Abs) {
		return nil, "", fmt.Errorf("%s: %w", l.Written, ErrNotLanded)
	}
	dir := l.Root
	if dir == "" {
		dir = filepath.VolumeName(l.Abs) + string(filepath.Separator)
	}
	rel, err := filepath.Rel(dir, l.Abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", fmt.Errorf("%s lands at %s, outside its root %s: %w", l.Written, l.Abs, dir, ErrNotLanded)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}

// Stat returns the landing's file information (following a final symlink
// that stays beneath the root).
func (l Landing) Stat() (fs.FileInfo, error) {
	r, rel, err := l.root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(rel)
}

// Head returns the landing's file information, as [Landing.Stat] does,
// and, when it is a regular file, up to n of its first bytes: what a read
// tool checks before reading, through one opening of the root instead of
// two. A file that is not regular is not opened (a FIFO would block, a
// device may act on being opened).
func (l Landing) Head(n int) (fs.FileInfo, []byte, error) {
	r, rel, err := l.root()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	fi, err := r.Stat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return fi, nil, err
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|openfile.Nonblock, 0)
	if err != nil {
		return fi, nil, err
	}
	defer f.Close()
	buf := make([]byte, min(int64(n), fi.Size()+1))
	m, err := openfile.Fill(f, buf, fi.Size())
	if err != nil {
		return fi, nil, err
	}
	if m < len(buf) && l.head != nil {
		// The file ended inside the buffer: this is all of it.
		l.head.mu.Lock()
		l.head.content = buf[:m:m]
		l.head.mu.Unlock()
	}
	return fi, buf[:m], nil
}

// Open opens the landing for reading.
func (l Landing) Open() (*os.File, error) {
	r, rel, err := l.root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(rel, os.O_RDONLY|openfile.Nonblock, 0)
}

// MkdirParents creates the landing's missing parent directories beneath
// its root (0o755).
func (l Landing) MkdirParents() error {
	r, rel, err := l.root()
	if err != nil {
		return err
	}
	defer r.Close()
	if dir := filepath.Dir(rel); dir != "." {
		return r.MkdirAll(dir, 0o755)
	}
	return nil
}

// localLineBytes caps each line a windowed read returns. The read tool
// shows at most its MaxLineBytes (2,000 by default) of a line, so this
// bound is generous; it keeps a window of limit lines within
// limit × localLineBytes of memory however long the file's lines are.
const localLineBytes = 16 << 10

// windowReaders recycles the 64 KiB buffers of windowed reads: a turn of
// 1,000 reads allocated (and zeroed) 64 MiB for them, most of its garbage.
var windowReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// ReadText reads the landing's text from the local disk: the whole text
// when line and limit are not positive, otherwise a window of lines. A
// window is streamed, so it costs memory for the window only: the lines
// before it are skipped without being kept, and a line longer than 16 KiB
// comes back cut, the rest discarded, with a marker giving its length.
//
// After a [Landing.Head] of the same landing that read the whole file, it
// reads what Head read instead of opening the file again: the two are
// one reading of the file, microseconds apart, in the same call.
func (l Landing) ReadText(ctx context.Context, line, limit int) (string, error) {
	var src io.Reader
	if b := l.head.take(); b != nil {
		src = bytes.NewReader(b)
	} else {
		f, err := l.Open()
		if err != nil {
			return "", err
		}
		defer f.Close()
		src = f
	}
	if line <= 1 && limit <= 0 {
		b, err := io.ReadAll(src)
		return string(b), err
	}
	br := windowReaders.Get().(*bufio.Reader)
	br.Reset(src)
	defer func() {
		br.Reset(nil) // drop the file
		windowReaders.Put(br)
	}()
	for n := 1; n < line; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, size, err := readLine(br, nil, 0); err != nil && (err != io.EOF || size == 0) {
			if err == io.EOF {
				return "", nil
			}
			return "", err
		}
	}
	var sb strings.Builder
	var buf []byte
	for n := 0; limit <= 0 || n < limit; n++ {
		var size int
		var err error
		// One byte more than the cap holds a kept line's "\n".
		buf, size, err = readLine(br, buf[:0], localLineBytes+1)
		if err != nil && err != io.EOF {
			return "", err
		}
		newline := err == nil
		length := size
		if newline {
			length--
		}
		if length <= localLineBytes {
			sb.Write(buf)
		} else {
			cut := localLineBytes
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			sb.Write(buf[:cut])
			fmt.Fprintf(&sb, "… [line cut: %d bytes]", length)
			if newline {
				sb.WriteByte('\n')
			}
		}
		if !newline {
			break
		}
	}
	return sb.String(), nil
}

// readLine reads one line, its "\n" included, appending at most keep of
// its bytes to buf. size is the line's whole length; err is io.EOF when
// the file ended before a "\n" (size 0: there was no line left).
func readLine(br *bufio.Reader, buf []byte, keep int) (kept []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if room := keep - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		size += len(chunk)
		if err != bufio.ErrBufferFull {
			return buf, size, err
		}
	}
}

// WriteText replaces the landing's file with content atomically, beneath
// its root: missing parent directories are created, the content goes to a
// temporary file in the same directory, which is then renamed over the
// landing, keeping the mode of a file it replaces. The rename replaces a
// directory entry, so it never writes through a hard link or a symlink
// that appeared meanwhile.
func (l Landing) WriteText(content string) error {
	r, rel, err := l.root()
	if err != nil {
		return err
	}
	defer r.Close()
	dir := filepath.Dir(rel)
	mode := os.FileMode(0o644)
	fi, err := r.Lstat(rel)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory", l.Written)
	case err == nil:
		mode = fi.Mode().Perm()
	case dir != "." && errors.Is(err, fs.ErrNotExist):
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return atomicfile.WriteIn(r, rel, []byte(content), mode)
}
