package tools

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

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

// UnnumberLines undoes [NumberLines] for display: text is the lines
// without their numbers, note the text after them (the read tool's
// "[Showing lines …]" remark), trimmed. ok is false when out does not
// start with a numbered line.
func UnnumberLines(out string) (text, note string, ok bool) {
	var sb strings.Builder
	for out != "" {
		line, rest, _ := strings.Cut(out, "\n")
		num, body, found := strings.Cut(line, "\t")
		if !found || strings.TrimLeft(num, " ") == "" || strings.Trim(num, " 0123456789") != "" {
			break
		}
		sb.WriteString(body)
		sb.WriteByte('\n')
		out, ok = rest, true
	}
	return sb.String(), strings.TrimSpace(out), ok
}

// absPath makes p absolute against cwd, lexically, for display only: a
// tool opens the landing its host gives it ([host.Host.Land]), never this.
func absPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}
