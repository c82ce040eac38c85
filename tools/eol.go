package tools

import "strings"

// Line endings. A file's line breaks are the file's, on every OS: an edit
// or an overwrite of a CRLF file writes CRLF, though models write "\n".
// The ending is read from the text the tool edits (the editor's buffer or
// the disk): an editor that hands out its buffer with "\n" and keeps the
// file's ending itself on save (Zed does) gets "\n" back, the disk gets
// what it had.

const crlf = "\r\n"

// lineEnding returns "\r\n" when most of text's line breaks are CRLF, and
// "\n" otherwise (no line break at all included).
func lineEnding(text string) string {
	n := strings.Count(text, "\n")
	c := strings.Count(text, crlf)
	if c > 0 && c >= n-c {
		return crlf
	}
	return "\n"
}

// withLineEnding returns s with every line break, CRLF or a bare LF, made
// eol. A lone "\r" is left alone: it is not a line break anyone writes.
func withLineEnding(s, eol string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	s = strings.ReplaceAll(s, crlf, "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// forLineEnding adapts an edit to a CRLF text: old and new get the text's
// line breaks, unless old as written occurs and the adapted one does not
// (a mixed file whose LF part the model quoted exactly).
func forLineEnding(content string, e Edit) Edit {
	if !strings.Contains(e.Old+e.New, "\n") || lineEnding(content) != crlf {
		return e
	}
	adapted := e
	adapted.Old = withLineEnding(e.Old, crlf)
	adapted.New = withLineEnding(e.New, crlf)
	if !strings.Contains(content, adapted.Old) && strings.Contains(content, e.Old) {
		return e
	}
	return adapted
}
