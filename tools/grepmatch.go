package tools

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// A lineMatcher finds the lines of a file that a grep pattern matches. It
// gets ripgrep's speed from two facts about the parsed pattern rather than
// from a faster regexp engine:
//
//   - most patterns contain a literal that every match must contain
//     (ErrUnexpectedEOF, "*Reader) Read" in `func \(\w+ \*Reader\) Read`):
//     a file without it is rejected by a memchr-speed scan, and the regexp
//     never runs on it;
//   - most patterns cannot match a newline: then every match lies on one
//     line that holds the literal, and the regexp runs on those lines only.
//
// Patterns without either fall back to one regexp pass over the whole file,
// which is what every search did before.
type lineMatcher struct {
	re *regexp.Regexp
	// lit is a literal every match contains, or nil.
	lit *literalFinder
	// oneLine reports that no match can span a newline and that the
	// pattern does not depend on where the text starts or ends (\A, \z), so
	// it may run on a single line cut out of the file.
	oneLine bool
}

// lineSpan is one line of a file: data[start:end] without its newline.
type lineSpan struct {
	no         int // 0-based
	start, end int
}

func newLineMatcher(expr string) (*lineMatcher, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &lineMatcher{re: re}
	// regexp.Compile parses with syntax.Perl; parse the same way so the
	// tree describes exactly the compiled program.
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return m, nil // cannot happen after Compile succeeded; no prefilter then
	}
	tree = tree.Simplify()
	if lit, fold := requiredLiteral(tree); len(lit) > 0 {
		m.lit = newLiteralFinder(lit, fold)
	}
	m.oneLine = !canMatchNewline(tree)
	return m, nil
}

// matchLines returns the lines of data that hold a match, in order, each
// once.
func (m *lineMatcher) matchLines(data []byte) []lineSpan {
	if m.lit != nil && m.lit.index(data, 0) < 0 {
		return nil
	}
	if m.oneLine && m.lit != nil {
		return m.literalLines(data)
	}
	return m.wholeFileLines(data)
}

// literalLines runs the regexp on the lines that hold the literal.
func (m *lineMatcher) literalLines(data []byte) []lineSpan {
	var out []lineSpan
	counted, line := 0, 0 // newlines before data[counted] = line
	for from := 0; from < len(data); {
		i := m.lit.index(data, from)
		if i < 0 {
			break
		}
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			end = i + j
		}
		if m.re.Match(data[start:end]) {
			line += bytes.Count(data[counted:start], nl)
			counted = start
			out = append(out, lineSpan{no: line, start: start, end: trimCR(data, start, end)})
		}
		from = end + 1
	}
	return out
}

// wholeFileLines runs the regexp over the whole file and maps each match to
// the line it starts on.
func (m *lineMatcher) wholeFileLines(data []byte) []lineSpan {
	locs := m.re.FindAllIndex(data, -1)
	var out []lineSpan
	counted, line := 0, 0
	for _, loc := range locs {
		if loc[0] == loc[1] && loc[0] == len(data) && len(data) > 0 && data[len(data)-1] == '\n' {
			continue // an empty match after the final newline is not a line
		}
		start := bytes.LastIndexByte(data[:loc[0]], '\n') + 1
		if len(out) > 0 && out[len(out)-1].start == start {
			continue
		}
		line += bytes.Count(data[counted:start], nl)
		counted = start
		end := len(data)
		if j := bytes.IndexByte(data[loc[0]:], '\n'); j >= 0 {
			end = loc[0] + j
		}
		out = append(out, lineSpan{no: line, start: start, end: trimCR(data, start, end)})
	}
	return out
}

var nl = []byte{'\n'}

// trimCR drops the carriage return of a CRLF line ending from a line's end.
func trimCR(data []byte, start, end int) int {
	if end > start && data[end-1] == '\r' {
		return end - 1
	}
	return end
}

// prevLine and nextLine step from a line to its neighbours; ok is false
// past the first or the last line.
func prevLine(data []byte, l lineSpan) (lineSpan, bool) {
	if l.start == 0 {
		return lineSpan{}, false
	}
	end := l.start - 1 // the newline ending the previous line
	start := bytes.LastIndexByte(data[:end], '\n') + 1
	return lineSpan{no: l.no - 1, start: start, end: trimCR(data, start, end)}, true
}

func nextLine(data []byte, l lineSpan) (lineSpan, bool) {
	j := bytes.IndexByte(data[l.end:], '\n')
	if j < 0 || l.end+j+1 >= len(data) {
		return lineSpan{}, false // no newline after this line, or nothing after it
	}
	start := l.end + j + 1
	end := len(data)
	if k := bytes.IndexByte(data[start:], '\n'); k >= 0 {
		end = start + k
	}
	return lineSpan{no: l.no + 1, start: start, end: trimCR(data, start, end)}, true
}

// requiredLiteral returns the longest literal that every match of re
// contains (empty when there is none) and whether it matches ASCII
// case-insensitively.
func requiredLiteral(re *syntax.Regexp) (lit []byte, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalBytes(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			l, f := requiredLiteral(sub)
			if len(l) > len(lit) || (len(l) == len(lit) && len(l) > 0 && fold && !f) {
				lit, fold = l, f
			}
		}
		return lit, fold
	}
	return nil, false
}

// literalBytes turns a literal's runes into the bytes a prefilter can look
// for. Case-sensitive runes are their UTF-8 encoding. Case-folded ones are
// usable only where ASCII folding is the whole truth: k and s also fold to
// non-ASCII runes (K KELVIN SIGN, ſ LONG S), and non-ASCII runes have
// folds of other lengths, so the literal is cut there and the longest piece
// kept. U+FFFD matches any invalid byte, so it cuts the literal too.
func literalBytes(runes []rune, fold bool) ([]byte, bool) {
	var best, cur []byte
	cut := func() {
		if len(cur) > len(best) {
			best = cur
		}
		cur = nil
	}
	for _, r := range runes {
		switch {
		case r == utf8.RuneError:
			cut()
		case fold && (r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S'):
			cut()
		case fold:
			cur = append(cur, lowerASCII(byte(r)))
		default:
			cur = utf8.AppendRune(cur, r)
		}
	}
	cut()
	return best, fold
}

// canMatchNewline reports whether a match of re could contain a newline, or
// whether re looks at the text's absolute start or end (then a line cut out
// of the file would match differently).
func canMatchNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpBeginText, syntax.OpEndText:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if canMatchNewline(sub) {
			return true
		}
	}
	return false
}

// A literalFinder finds a literal in text by scanning for its rarest byte
// with bytes.IndexByte (vectorised) and checking the literal around each
// hit, the way ripgrep picks a rare byte rather than the first one.
type literalFinder struct {
	lit  []byte // lower case when fold
	fold bool
	rare int  // index in lit of the byte scanned for
	lo   byte // that byte, and its upper-case twin when fold (else lo again)
	up   byte
}

func newLiteralFinder(lit []byte, fold bool) *literalFinder {
	f := &literalFinder{lit: lit, fold: fold}
	for i, b := range lit {
		if byteRank(b) < byteRank(lit[f.rare]) {
			f.rare = i
		}
	}
	f.lo, f.up = lit[f.rare], lit[f.rare]
	if fold {
		f.up = upperASCII(f.lo)
	}
	return f
}

// index returns the offset of the first occurrence of the literal in
// data at or after from, or -1.
func (f *literalFinder) index(data []byte, from int) int {
	n := len(f.lit)
	nextLo, nextUp := -1, -1 // cached positions of lo and up at or after off; -1 = not searched
	for off := from + f.rare; off < len(data); {
		var i int
		if f.lo == f.up {
			i = bytes.IndexByte(data[off:], f.lo)
			if i < 0 {
				return -1
			}
			i += off
		} else {
			if nextLo < off {
				nextLo = indexFrom(data, off, f.lo)
			}
			if nextUp < off {
				nextUp = indexFrom(data, off, f.up)
			}
			switch {
			case nextLo == len(data) && nextUp == len(data):
				return -1
			case nextLo < nextUp:
				i = nextLo
			default:
				i = nextUp
			}
		}
		start := i - f.rare
		if start+n <= len(data) && f.equalAt(data[start:start+n]) {
			return start
		}
		off = i + 1
	}
	return -1
}

// indexFrom is IndexByte from off, answering len(data) for "none" so the
// answer never needs searching again.
func indexFrom(data []byte, off int, b byte) int {
	if i := bytes.IndexByte(data[off:], b); i >= 0 {
		return off + i
	}
	return len(data)
}

func (f *literalFinder) equalAt(s []byte) bool {
	if !f.fold {
		return bytes.Equal(s, f.lit)
	}
	for i, b := range s {
		if lowerASCII(b) != f.lit[i] {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func upperASCII(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - ('a' - 'A')
	}
	return b
}

// commonBytes lists the bytes of source code and prose from the most to
// the least frequent (roughly; the order only steers which byte a
// literalFinder scans for). Bytes not listed are rarer than all of them.
const commonBytes = " \tetaoinsrlcdhu\npmf.g(),_=\"ybw;:/{}*-vk'0x1>2<[]&!TSEACRIN#OLDP+M@3$%4B5F9678HUGW|?^~jqzJKQVXYZ\\`\r"

var byteRanks = func() (r [256]int) {
	for i := range r {
		r[i] = -1 // unranked: rarest
	}
	for i := 0; i < len(commonBytes); i++ {
		r[commonBytes[i]] = len(commonBytes) - i
	}
	return r
}()

// byteRank is higher for more frequent bytes; a folded literal's letters
// are ranked by their lower case, which is listed before the upper.
func byteRank(b byte) int { return byteRanks[b] }
