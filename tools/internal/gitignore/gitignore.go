package gitignore

import (
	"bufio"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// pattern is one parsed .gitignore line.
type pattern struct {
	segments []string // the pattern split on "/", after removing the anchor and dir-only slash
	negate   bool
	dirOnly  bool
	anchored bool // matches relative to the .gitignore's directory only
}

// Matcher holds the patterns of one .gitignore file. Paths given to Match are
// relative to the directory that holds the file, slash-separated.
type Matcher struct {
	patterns []pattern
}

// Parse reads .gitignore text.
func Parse(r io.Reader) (*Matcher, error) {
	m := &Matcher{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if p, ok := parseLine(sc.Text()); ok {
			m.patterns = append(m.patterns, p)
		}
	}
	return m, sc.Err()
}

// ParseFile reads the .gitignore at name. A missing file yields (nil, nil):
// most directories have none.
func ParseFile(name string) (*Matcher, error) {
	f, err := os.Open(name)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

func parseLine(line string) (pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are ignored unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	var p pattern
	switch {
	case line[0] == '!':
		p.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	if strings.HasPrefix(line, "/") {
		p.anchored = true
		line = strings.TrimLeft(line, "/")
	} else if strings.Contains(line, "/") {
		// A slash in the middle anchors the pattern too (gitignore(5)).
		p.anchored = true
	}
	// "[!...]" is git's negated class; path.Match spells it "[^...]".
	line = strings.ReplaceAll(line, "[!", "[^")
	p.segments = strings.Split(line, "/")
	if !p.anchored {
		// An unanchored pattern matches at any depth.
		p.segments = append([]string{"**"}, p.segments...)
	}
	return p, true
}

// Result is the verdict of one Matcher for one path.
type Result int

const (
	// NoMatch means no pattern of the file mentions the path.
	NoMatch Result = iota
	// Ignored means the last matching pattern excludes the path.
	Ignored
	// Included means the last matching pattern is a negation (!).
	Included
)

// Match reports what the file's patterns say about rel (slash-separated,
// relative to the file's directory). The last matching pattern wins.
func (m *Matcher) Match(rel string, isDir bool) Result {
	if m == nil {
		return NoMatch
	}
	segs := strings.Split(rel, "/")
	for i := len(m.patterns) - 1; i >= 0; i-- {
		p := &m.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		if matchSegments(p.segments, segs) {
			if p.negate {
				return Included
			}
			return Ignored
		}
	}
	return NoMatch
}

// MatchPath reports whether the slash-separated pattern matches the
// slash-separated name as a whole: * and ? and [...] stay within one
// segment, and a ** segment matches zero or more whole segments.
func MatchPath(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// Collapse runs of ** and try every split point.
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				// A trailing ** matches everything inside, not the
				// directory itself ("abc/**" does not match "abc").
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if !matchSegment(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func matchSegment(pat, name string) bool {
	if !strings.ContainsAny(pat, `*?[\`) {
		return pat == name
	}
	ok, err := path.Match(pat, name)
	return err == nil && ok
}

// Stack is the set of .gitignore files in force at one directory of a walk:
// the outermost first. It is immutable; Push returns a new Stack.
type Stack struct {
	frames []frame
}

type frame struct {
	base string // absolute directory of the .gitignore
	m    *Matcher
}

// Push returns s plus the .gitignore patterns of dir (absolute), if any.
func (s *Stack) Push(dir string, m *Matcher) *Stack {
	if m == nil {
		return s
	}
	n := &Stack{frames: make([]frame, 0, len(s.frameList())+1)}
	n.frames = append(n.frames, s.frameList()...)
	n.frames = append(n.frames, frame{base: dir, m: m})
	return n
}

func (s *Stack) frameList() []frame {
	if s == nil {
		return nil
	}
	return s.frames
}

// Ignored reports whether abs (an absolute path under every frame's base) is
// ignored. Deeper .gitignore files override shallower ones.
func (s *Stack) Ignored(abs string, isDir bool) bool {
	frames := s.frameList()
	for i := len(frames) - 1; i >= 0; i-- {
		rel, ok := strings.CutPrefix(abs, frames[i].base+string(filepath.Separator))
		if !ok {
			continue
		}
		switch frames[i].m.Match(filepath.ToSlash(rel), isDir) {
		case Ignored:
			return true
		case Included:
			return false
		}
	}
	return false
}
