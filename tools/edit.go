package tools

import (
	"fmt"
	"strings"
)

// Edit is one exact-string replacement.
type Edit struct {
	Old        string `json:"old" desc:"The exact text to replace, including whitespace and indentation, as it appears in the file (without read's line-number prefixes). It must occur exactly once unless replaceAll is true."`
	New        string `json:"new" desc:"The text that replaces old."`
	ReplaceAll *bool  `json:"replaceAll,omitempty" desc:"Replace every occurrence of old instead of requiring exactly one." default:"false"`
}

// EditError says which edit of a batch failed and why, in words a model
// can act on. No edit of a failed batch is applied.
type EditError struct {
	Index   int // 0-based index in the batch
	Count   int // occurrences of Old found (0 = missing, >1 = not unique)
	Message string
}

func (e *EditError) Error() string { return e.Message }

// MaxEditedBytes bounds what a batch of edits may grow a file to. One
// replaceAll of a short, frequent string with a long one multiplies the
// file's size; unbounded, a single call could exhaust the daemon's memory.
const MaxEditedBytes = 64 << 20

// ApplyEdits applies edits to content in order, each to the result of the
// previous one, and returns the new content and the number of
// replacements. In a CRLF text, the line breaks of old and new are taken
// as CRLF, so the text stays CRLF. It is all or nothing: on the first failing edit it returns
// an *EditError and the caller writes nothing.
func ApplyEdits(content string, edits []Edit) (string, int, error) {
	if len(edits) == 0 {
		return "", 0, &EditError{Index: -1, Message: "no edits given"}
	}
	total := 0
	for i, e := range edits {
		e = forLineEnding(content, e)
		label := "old"
		if len(edits) > 1 {
			label = fmt.Sprintf("edits[%d].old", i)
		}
		if e.Old == "" {
			return "", 0, &EditError{Index: i, Message: label + " is empty; to create or overwrite a whole file use the write tool"}
		}
		if e.Old == e.New {
			return "", 0, &EditError{Index: i, Message: label + " and new are identical; nothing would change"}
		}
		n := strings.Count(content, e.Old)
		switch {
		case n == 0:
			return "", 0, &EditError{Index: i, Count: 0, Message: label + " was not found in the file. " + missHint(content, e.Old, i > 0)}
		case n > 1 && (e.ReplaceAll == nil || !*e.ReplaceAll):
			return "", 0, &EditError{Index: i, Count: n, Message: fmt.Sprintf(
				"%s occurs %d times (at lines %s); include more surrounding lines to make it unique, or set replaceAll to replace all of them",
				label, n, lineList(occurrenceLines(content, e.Old, 10), n))}
		}
		all := e.ReplaceAll != nil && *e.ReplaceAll
		if !all {
			n = 1
		}
		if grown := len(content) + n*(len(e.New)-len(e.Old)); grown > MaxEditedBytes {
			return "", 0, &EditError{Index: i, Count: n, Message: fmt.Sprintf(
				"%s: replacing %d occurrence%s would make the file %d bytes, over edit's limit of %d MiB; use a command for bulk rewrites",
				label, n, plural(n), grown, MaxEditedBytes>>20)}
		}
		if all {
			content = strings.ReplaceAll(content, e.Old, e.New)
			total += n
		} else {
			content = strings.Replace(content, e.Old, e.New, 1)
			total++
		}
	}
	return content, total, nil
}

// missHint helps a model find what it meant: the usual causes are
// whitespace, read's line-number prefixes, and an earlier edit of the same
// batch having changed the text.
func missHint(content, old string, afterEarlierEdits bool) string {
	var hints []string
	first := strings.TrimSpace(firstLine(old))
	if first != "" {
		if lines := lineMatches(content, first, 5); len(lines) > 0 {
			hints = append(hints, fmt.Sprintf("Its first line (trimmed) appears at line %s, so the difference is likely whitespace, indentation or a later line; re-read the file and copy the text exactly.", lineList(lines, len(lines))))
		}
	}
	if strings.Contains(old, "\t") && numberedPrefix(old) {
		hints = append(hints, "It seems to contain read's line-number prefixes; remove them.")
	}
	if afterEarlierEdits {
		hints = append(hints, "Earlier edits in this call are applied first and may have changed this text.")
	}
	if len(hints) == 0 {
		return "Re-read the file and copy the text exactly, including whitespace."
	}
	return strings.Join(hints, " ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func numberedPrefix(s string) bool {
	l := strings.TrimLeft(firstLine(s), " ")
	i := 0
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	return i > 0 && i < len(l) && l[i] == '\t'
}

// lineMatches returns up to max 1-based lines whose trimmed text contains s.
func lineMatches(content, s string, max int) []int {
	var out []int
	for n, line := range strings.Split(content, "\n") {
		if strings.Contains(line, s) {
			out = append(out, n+1)
			if len(out) == max {
				break
			}
		}
	}
	return out
}

// occurrenceLines returns the 1-based lines where up to max occurrences of
// s start.
func occurrenceLines(content, s string, max int) []int {
	var out []int
	line, off := 1, 0
	for len(out) < max {
		i := strings.Index(content[off:], s)
		if i < 0 {
			break
		}
		line += strings.Count(content[off:off+i], "\n")
		out = append(out, line)
		line += strings.Count(s, "\n")
		off += i + len(s)
	}
	return out
}

func lineList(lines []int, total int) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = fmt.Sprint(l)
	}
	s := strings.Join(parts, ", ")
	if total > len(lines) {
		s += ", …"
	}
	return s
}
