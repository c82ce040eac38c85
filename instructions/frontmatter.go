package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FrontMatter is the YAML front matter of a Markdown file: the block
// between a first line "---" and the next line "---". Only the subset that
// SKILL.md and command files use is understood: top-level "key: value"
// pairs whose values are plain, single- or double-quoted scalars, or
// literal (|) and folded (>) block scalars. A key whose value is a nested
// block (an indented map or list) or a flow collection ([a, b], {k: v}) is
// kept as non-scalar: its presence is known, its value is not interpreted.
// Anything else is an error naming the line, never a guess.
type FrontMatter struct {
	fields map[string]field
	keys   []string // in file order
}

type field struct {
	value  string
	scalar bool
	line   int
}

// FrontMatterError is a front matter that cannot be read, with the 1-based
// line of the file where the problem is.
type FrontMatterError struct {
	Line int
	Err  error
}

func (e *FrontMatterError) Error() string {
	return fmt.Sprintf("front matter line %d: %v", e.Line, e.Err)
}

func (e *FrontMatterError) Unwrap() error { return e.Err }

// ErrNoFrontMatter is returned by [ParseFrontMatter]'s callers that require
// a front matter when the file does not start with "---".
var ErrNoFrontMatter = errors.New(`no front matter (the file must start with a line "---")`)

// ParseFrontMatter splits data into its front matter and the Markdown body
// after it. A file that does not start with a "---" line has no front
// matter: fm is empty (Has reports false for every key) and body is the
// whole text. A UTF-8 byte order mark and CRLF line ends are accepted.
func ParseFrontMatter(data []byte) (fm FrontMatter, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		return FrontMatter{}, "", &FrontMatterError{Line: 1, Err: errors.New("the file is not valid UTF-8")}
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return FrontMatter{}, text, nil
	}
	var lines []string
	closed := false
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			closed = true
			break
		}
		lines = append(lines, line)
	}
	if !closed {
		return FrontMatter{}, "", &FrontMatterError{Line: 1, Err: errors.New(`the front matter has no closing "---" line`)}
	}
	fm, err = parseFields(lines)
	if err != nil {
		return FrontMatter{}, "", err
	}
	return fm, strings.TrimLeft(rest, "\n"), nil
}

// Has reports whether key is present, scalar or not.
func (fm FrontMatter) Has(key string) bool {
	_, ok := fm.fields[key]
	return ok
}

// Keys returns the keys in file order.
func (fm FrontMatter) Keys() []string { return append([]string(nil), fm.keys...) }

// String returns the scalar value of key; ok is false when key is absent.
// A key whose value is a nested block or a flow collection is an error.
func (fm FrontMatter) String(key string) (value string, ok bool, err error) {
	f, ok := fm.fields[key]
	if !ok {
		return "", false, nil
	}
	if !f.scalar {
		return "", true, &FrontMatterError{Line: f.line, Err: fmt.Errorf("%s must be a single text value, not a list or map", key)}
	}
	return f.value, true, nil
}

// parseFields parses the lines between the "---" markers; line numbers
// count the opening marker as line 1.
func parseFields(lines []string) (FrontMatter, error) {
	fm := FrontMatter{fields: map[string]field{}}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		n := i + 2 // file line number
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(line, "\t") {
			return FrontMatter{}, &FrontMatterError{Line: n, Err: errors.New("tabs cannot indent YAML")}
		}
		if line[0] == ' ' {
			return FrontMatter{}, &FrontMatterError{Line: n, Err: errors.New("unexpected indented line (only top-level key: value pairs are allowed)")}
		}
		key, raw, found := strings.Cut(line, ":")
		if !found || !isKey(key) {
			return FrontMatter{}, &FrontMatterError{Line: n, Err: fmt.Errorf("expected key: value, got %q", clip(line))}
		}
		if raw != "" && raw[0] != ' ' && raw[0] != '\t' {
			return FrontMatter{}, &FrontMatterError{Line: n, Err: fmt.Errorf("a space must follow the colon after %q", key)}
		}
		if _, dup := fm.fields[key]; dup {
			return FrontMatter{}, &FrontMatterError{Line: n, Err: fmt.Errorf("duplicate key %q", key)}
		}
		// The indented lines that follow belong to this key.
		j := i + 1
		for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || lines[j][0] == ' ' || lines[j][0] == '\t') {
			j++
		}
		// Trailing blank lines belong to nobody.
		for j > i+1 && strings.TrimSpace(lines[j-1]) == "" {
			j--
		}
		cont := lines[i+1 : j]
		f, err := parseValue(strings.TrimSpace(raw), cont, n)
		if err != nil {
			return FrontMatter{}, err
		}
		fm.fields[key] = f
		fm.keys = append(fm.keys, key)
		i = j - 1
	}
	return fm, nil
}

func isKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// parseValue reads one value: raw is the text after "key:", cont the
// indented lines after it, n the key's line number.
func parseValue(raw string, cont []string, n int) (field, error) {
	for k, c := range cont {
		if strings.HasPrefix(c, "\t") {
			return field{}, &FrontMatterError{Line: n + 1 + k, Err: errors.New("tabs cannot indent YAML")}
		}
	}
	switch {
	case raw == "" || strings.HasPrefix(raw, "#"):
		if len(cont) == 0 {
			return field{value: "", scalar: true, line: n}, nil
		}
		return field{scalar: false, line: n}, nil // a nested map or list
	case raw[0] == '|' || raw[0] == '>':
		if !isBlockHeader(raw) {
			return field{}, &FrontMatterError{Line: n, Err: fmt.Errorf("unsupported block scalar header %q", raw)}
		}
		return field{value: blockScalar(raw, cont), scalar: true, line: n}, nil
	case raw[0] == '[' || raw[0] == '{':
		if len(cont) > 0 {
			return field{}, &FrontMatterError{Line: n + 1, Err: errors.New("a flow collection must fit on one line here")}
		}
		return field{scalar: false, line: n}, nil
	case raw[0] == '"' || raw[0] == '\'':
		unquote := doubleQuoted
		if raw[0] == '\'' {
			unquote = singleQuoted
		}
		v, rest, err := unquote(raw)
		if err == nil && len(cont) > 0 {
			err = errors.New("a quoted value must fit on one line here")
		}
		if err == nil {
			err = trailing(rest)
		}
		if err != nil {
			return field{}, &FrontMatterError{Line: n, Err: err}
		}
		return field{value: v, scalar: true, line: n}, nil
	case raw[0] == '&' || raw[0] == '*' || raw[0] == '!' || raw[0] == '%' || raw[0] == '@' || raw[0] == '`':
		return field{}, &FrontMatterError{Line: n, Err: fmt.Errorf("unsupported YAML value %q (quote it)", clip(raw))}
	}
	// A plain scalar, possibly continued on indented lines (folded with
	// spaces, as YAML does).
	parts := []string{plainValue(raw)}
	for _, c := range cont {
		c = strings.TrimSpace(c)
		if c == "" {
			parts = append(parts, "\n")
			continue
		}
		if strings.HasPrefix(c, "#") {
			break
		}
		parts = append(parts, plainValue(c))
	}
	var sb strings.Builder
	for k, p := range parts {
		if k > 0 && p != "\n" && parts[k-1] != "\n" {
			sb.WriteByte(' ')
		}
		sb.WriteString(p)
	}
	return field{value: sb.String(), scalar: true, line: n}, nil
}

// plainValue strips a trailing " # comment" from a plain scalar.
func plainValue(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func trailing(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest == "" || strings.HasPrefix(rest, "#") {
		return nil
	}
	return fmt.Errorf("unexpected text %q after the quoted value", clip(rest))
}

func isBlockHeader(raw string) bool {
	h := plainValue(raw)
	switch h[1:] {
	case "", "-", "+":
		return true
	}
	return false
}

// blockScalar reads a literal (|) or folded (>) block: the indentation of
// its first non-blank line is removed from every line; chomping "-" drops
// the final newline, "+" keeps trailing blank lines, the default keeps one
// newline.
func blockScalar(header string, cont []string) string {
	h := plainValue(header)
	indent := -1
	for _, c := range cont {
		if strings.TrimSpace(c) != "" {
			indent = len(c) - len(strings.TrimLeft(c, " "))
			break
		}
	}
	var lines []string
	for _, c := range cont {
		if len(c) >= indent && indent >= 0 {
			c = c[indent:]
		} else {
			c = strings.TrimLeft(c, " ")
		}
		lines = append(lines, c)
	}
	var text string
	if h[0] == '|' {
		text = strings.Join(lines, "\n")
	} else {
		var sb strings.Builder
		for k, l := range lines {
			switch {
			case k == 0:
			case l == "" || strings.HasPrefix(l, " "):
				sb.WriteByte('\n')
			case lines[k-1] == "":
				// The blank line before was the break.
			default:
				sb.WriteByte(' ')
			}
			sb.WriteString(l)
		}
		text = sb.String()
	}
	switch {
	case strings.HasSuffix(h, "-"):
		return strings.TrimRight(text, "\n")
	case strings.HasSuffix(h, "+"):
		return text + "\n"
	}
	if text == "" {
		return ""
	}
	return strings.TrimRight(text, "\n") + "\n"
}

func doubleQuoted(raw string) (value, rest string, err error) {
	var sb strings.Builder
	for i := 1; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '"':
			return sb.String(), raw[i+1:], nil
		case '\\':
			if i+1 >= len(raw) {
				return "", "", errors.New("unterminated escape in a quoted value")
			}
			i++
			switch raw[i] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case '"', '\\', '/':
				sb.WriteByte(raw[i])
			case '0':
				return "", "", errors.New(`the escape \0 is not allowed`)
			default:
				return "", "", fmt.Errorf(`unsupported escape \%c in a quoted value`, raw[i])
			}
		default:
			sb.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated double-quoted value")
}

func singleQuoted(raw string) (value, rest string, err error) {
	var sb strings.Builder
	for i := 1; i < len(raw); i++ {
		if raw[i] == '\'' {
			if i+1 < len(raw) && raw[i+1] == '\'' {
				sb.WriteByte('\'')
				i++
				continue
			}
			return sb.String(), raw[i+1:], nil
		}
		sb.WriteByte(raw[i])
	}
	return "", "", errors.New("unterminated single-quoted value")
}

func clip(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}
