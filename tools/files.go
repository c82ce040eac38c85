package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// LocalFiles is the local-disk [host.Files]: what the bridge uses when the
// editor does not offer fs/read_text_file or fs/write_text_file. Reading
// streams the file, so a line/limit window costs memory for that window
// only; writing goes through a temporary file and a rename, so a reader
// never sees half a file.
type LocalFiles struct{}

// ReadTextFile returns the text of path, or of limit lines from the 1-based
// line when those are positive.
func (LocalFiles) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if line <= 1 && limit <= 0 {
		b, err := io.ReadAll(f)
		return string(b), err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; n < line; n++ {
		if err := skipLine(br); err != nil {
			if err == io.EOF {
				return "", nil
			}
			return "", err
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	var sb strings.Builder
	for n := 0; limit <= 0 || n < limit; n++ {
		s, err := br.ReadString('\n')
		sb.WriteString(s)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return sb.String(), nil
}

func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		return err
	}
}

// WriteTextFile replaces path with content atomically, creating parent
// directories and keeping the mode of a file it replaces.
func (LocalFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".dshd-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Rename onto a symlink would replace the link; write through it instead.
	if target, err := filepath.EvalSymlinks(path); err == nil && target != path {
		path = target
	}
	return os.Rename(tmp.Name(), path)
}

// sniffLen is how much of a file decides whether it is binary (what git
// and GNU grep look at, give or take).
const sniffLen = 8000

// isBinary reports whether head, the start of a file, looks binary.
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// The sniffed window may cut a multi-byte rune at its end.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// sniffFile reads the head of a local file and reports whether it is
// binary.
func sniffFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, sniffLen)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	return isBinary(buf[:n]), nil
}

// NumberLines formats text as the read tool shows it: each line prefixed by
// its 1-based number (starting at first) and a tab, lines longer than
// maxLineBytes cut with a marker, and the whole bounded by maxBytes. It
// returns the formatted text, the number of lines it formatted, and whether
// maxBytes stopped it early.
func NumberLines(text string, first, maxLineBytes, maxBytes int) (out string, lines int, truncated bool) {
	var sb strings.Builder
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if maxLineBytes > 0 && len(line) > maxLineBytes {
			cut := maxLineBytes
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = fmt.Sprintf("%s… [line cut: %d bytes]", line[:cut], len(line))
		}
		entry := fmt.Sprintf("%6d\t%s\n", first+lines, line)
		if maxBytes > 0 && sb.Len()+len(entry) > maxBytes && lines > 0 {
			return sb.String(), lines, true
		}
		sb.WriteString(entry)
		lines++
	}
	return sb.String(), lines, false
}

// absPath makes p absolute against cwd, lexically. Confinement and
// symlinks are the guards' business (policy.Confine, applied by the
// bridge before the body runs); the tool then opens what the kernel
// resolves.
func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}
