package tools

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GlobMatch is one file found by [Glob].
type GlobMatch struct {
	Path    string // absolute
	ModTime time.Time
}

// Glob returns the files under root matching pattern, newest first (ties by
// path), at most limit of them (0 = no limit), and whether more matched.
// A pattern without "/" matches file names at any depth, as find -name
// does; one with "/" matches the path relative to root, where * and ?
// stay within a directory and ** spans any number of them. {a,b}
// alternatives are expanded, to at most 1,024 patterns (more is an
// error: they multiply, and could exhaust memory). An absolute pattern is split into its static
// directory (the new root) and the rest. .gitignore is honoured.
func Glob(ctx context.Context, root, pattern string, limit int) ([]GlobMatch, bool, error) {
	root, pattern, anchored := globRoot(root, pattern)
	return globWalk(ctx, root, pattern, anchored, limit)
}

// globWalk is [Glob] once [globRoot] has split the pattern: it walks dir
// for the rest of the pattern.
func globWalk(ctx context.Context, root, pattern string, anchored bool, limit int) ([]GlobMatch, bool, error) {
	if pattern == "" {
		return nil, false, fmt.Errorf("empty pattern")
	}
	m, err := newFileMatcher(pattern)
	if err != nil {
		return nil, false, fmt.Errorf("bad pattern %q: %w", pattern, err)
	}
	for _, p := range m.pats {
		if _, err := filepath.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
			return nil, false, fmt.Errorf("bad pattern %q: %w", p, err)
		}
	}
	m.anchored = anchored
	// With a limit only the newest limit matches are kept, in a heap whose
	// root is the oldest kept: memory stays bounded by the limit however
	// many files match (a million-file tree included).
	newest := matchHeap{limit: limit}
	err = walkFiles(ctx, root, func(abs, rel string, e walkEntry) error {
		if !m.match(rel) {
			return nil
		}
		newest.add(GlobMatch{Path: abs, ModTime: e.modTime()})
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	out := newest.m
	slices.SortFunc(out, newerFirst)
	return out, newest.dropped, nil
}

// newerFirst orders matches newest first, ties by path.
func newerFirst(a, b GlobMatch) int {
	if c := b.ModTime.Compare(a.ModTime); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// matchHeap keeps the limit first matches in [newerFirst] order (all when
// limit is 0); as a container/heap its root is the last of those kept.
type matchHeap struct {
	m       []GlobMatch
	limit   int
	dropped bool // a match was left out
}

func (h *matchHeap) add(g GlobMatch) {
	switch {
	case h.limit <= 0:
		h.m = append(h.m, g)
	case len(h.m) < h.limit:
		heap.Push(h, g)
	default:
		h.dropped = true
		if newerFirst(g, h.m[0]) < 0 { // newer than the oldest kept
			h.m[0] = g
			heap.Fix(h, 0)
		}
	}
}

func (h *matchHeap) Len() int           { return len(h.m) }
func (h *matchHeap) Less(i, j int) bool { return newerFirst(h.m[i], h.m[j]) > 0 }
func (h *matchHeap) Swap(i, j int)      { h.m[i], h.m[j] = h.m[j], h.m[i] }
func (h *matchHeap) Push(x any)         { h.m = append(h.m, x.(GlobMatch)) }
func (h *matchHeap) Pop() any           { panic("matchHeap: never popped") }

// globRoot moves a pattern's leading directories without wildcards into
// the root the walk starts from: "src/**/*.go" under r walks r/src for
// "**/*.go", "/abs/dir/*.go" walks /abs/dir for "*.go", "../x/*.go" walks
// r/../x. anchored reports that the rest must match whole relative paths
// (a slash-free "*.go" left over from "src/*.go" means src's own files, not
// every .go file below it). The root is where the walk happens, so it is
// also the path a policy must check: see [GlobDir].
func globRoot(root, pattern string) (string, string, bool) {
	p := filepath.ToSlash(pattern)
	abs := strings.HasPrefix(p, "/")
	if abs {
		p = strings.TrimLeft(p, "/")
		root = "/"
	}
	dir, rest := staticPrefix(p)
	if dir == "" {
		return root, rest, abs
	}
	return filepath.Join(root, filepath.FromSlash(dir)), rest, true
}

// GlobDir returns the directory a glob of pattern under root walks: the
// path a root-confinement policy must check.
func GlobDir(root, pattern string) string {
	dir, _, _ := globRoot(root, pattern)
	return dir
}

// GrepOptions shape one [Grep].
type GrepOptions struct {
	Pattern    string // RE2 syntax (Go regexp)
	Glob       string // optional file filter, as for Glob
	IgnoreCase bool
	Context    int // lines before and after each match
	// FilesOnly lists the matching files instead of matching lines.
	FilesOnly bool
	// Limit caps the matching lines (or files with FilesOnly); 0 = none.
	Limit int
	// MaxFileBytes skips larger files; 0 = 16 MiB.
	MaxFileBytes int64
	// MaxLineBytes cuts long lines in the output; 0 = 500.
	MaxLineBytes int
}

// GrepLine is a line of a [GrepFile]: a match, or a context line.
type GrepLine struct {
	Line    int // 1-based
	Text    string
	IsMatch bool
}

// GrepFile holds the results of one file.
type GrepFile struct {
	Path    string // absolute
	Matches int    // matching lines
	Lines   []GrepLine
}

// GrepResult is what [Grep] found, files sorted by path.
type GrepResult struct {
	Files   []GrepFile
	Matches int  // matching lines reported
	Capped  bool // Limit stopped the search
	Skipped int  // binary or oversized files skipped
}

// Grep searches the files under root (honouring .gitignore, skipping
// binary files) for a regular expression, on all cores. With a Limit the
// search stops once that many lines (or files) matched; which ones are kept
// is then the first Limit in path order among those found.
func Grep(ctx context.Context, root string, o GrepOptions) (*GrepResult, error) {
	expr := o.Pattern
	if o.IgnoreCase {
		expr = "(?i)" + expr
	}
	// Multi-line mode so ^ and $ match at line boundaries when the whole
	// file is searched at once.
	m, err := newLineMatcher("(?m)" + expr)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %w", err)
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 16 << 20
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 500
	}
	var filter *fileMatcher
	if o.Glob != "" {
		if filter, err = newFileMatcher(o.Glob); err != nil {
			return nil, fmt.Errorf("bad glob %q: %w", o.Glob, err)
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	paths := make(chan string, 256)
	var (
		mu      sync.Mutex
		res     GrepResult
		found   atomic.Int64
		skipped atomic.Int64
		wg      sync.WaitGroup
	)
	workers := runtime.GOMAXPROCS(0)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for p := range paths {
				gf, ok := grepFile(p, m, o, &buf)
				if !ok {
					skipped.Add(1)
					continue
				}
				if gf == nil {
					continue
				}
				n := int64(gf.Matches)
				if o.FilesOnly {
					n = 1
				}
				total := found.Add(n)
				mu.Lock()
				res.Files = append(res.Files, *gf)
				mu.Unlock()
				// Stop once past the limit: one more than kept proves the
				// result is capped.
				if o.Limit > 0 && total > int64(o.Limit) {
					cancel()
				}
			}
		}()
	}
	walk := walkFiles
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		// A single file is searched whatever .gitignore or the glob say:
		// the caller named it.
		filter = nil
		walk = func(ctx context.Context, root string, fn walkFunc) error {
			return fn(root, filepath.Base(root), walkEntry{})
		}
	}
	walkErr := walk(ctx, root, func(abs, rel string, e walkEntry) error {
		// Like grep -r and rg, symlinks met on the way are not followed: a
		// link inside the roots must not expose a file outside them.
		if e.DirEntry != nil && e.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if filter != nil && !filter.match(rel) {
			return nil
		}
		select {
		case paths <- abs:
			return nil
		case <-ctx.Done():
			return errStopWalk
		}
	})
	close(paths)
	wg.Wait()
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if walkErr != nil && walkErr != context.Canceled {
		return nil, walkErr
	}
	slices.SortFunc(res.Files, func(a, b GrepFile) int { return strings.Compare(a.Path, b.Path) })
	res.Skipped = int(skipped.Load())
	res.Capped = o.Limit > 0 && found.Load() > int64(o.Limit)
	// Keep exactly Limit, in path order.
	n := 0
	for i := range res.Files {
		f := &res.Files[i]
		if o.Limit > 0 && o.FilesOnly && n >= o.Limit {
			res.Files = res.Files[:i]
			break
		}
		if o.Limit > 0 && !o.FilesOnly && n+f.Matches > o.Limit {
			keep := o.Limit - n
			f.Lines = trimToMatches(f.Lines, keep)
			f.Matches = keep
			res.Files = res.Files[:i+1]
			if keep == 0 {
				res.Files = res.Files[:i]
			}
			n += keep
			break
		}
		if o.FilesOnly {
			n++
		} else {
			n += f.Matches
		}
	}
	res.Matches = n
	return &res, nil
}

// trimToMatches keeps lines up to and including the keep-th match and its
// trailing context.
func trimToMatches(lines []GrepLine, keep int) []GrepLine {
	seen := 0
	for i, l := range lines {
		if l.IsMatch {
			if seen == keep {
				// Drop the context that led up to this match too.
				j := i
				for j > 0 && !lines[j-1].IsMatch && lines[j-1].Line == lines[j].Line-1 {
					j--
				}
				return lines[:j]
			}
			seen++
		}
	}
	return lines
}

// grepFile searches one file, reading it into *buf (grown as needed and
// kept for the next file: a search reads hundreds of megabytes, and a
// fresh buffer per file is most of its garbage). ok is false when the file
// was skipped (binary, too big, unreadable); a nil *GrepFile means no match.
func grepFile(path string, m *lineMatcher, o GrepOptions, buf *[]byte) (*GrepFile, bool) {
	data, ok := readRegular(path, o.MaxFileBytes, buf)
	if !ok {
		return nil, false
	}
	head := data
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, false
	}
	matches := m.matchLines(data)
	if len(matches) == 0 {
		return nil, true
	}
	gf := &GrepFile{Path: path, Matches: len(matches)}
	if o.FilesOnly {
		gf.Matches = 1
		return gf, true
	}
	text := func(l lineSpan) string {
		s := data[l.start:l.end]
		if len(s) > o.MaxLineBytes {
			cut := o.MaxLineBytes
			for cut > 0 && (s[cut]&0xC0) == 0x80 {
				cut--
			}
			return string(s[:cut]) + "…"
		}
		return string(s)
	}
	last := -1 // last line emitted
	for k, l := range matches {
		// Context before: walk back from the match, then emit in order.
		before := gf.Lines
		n := len(before)
		for c, ok := prevLine(data, l); ok && c.no >= l.no-o.Context && c.no > last; c, ok = prevLine(data, c) {
			before = append(before, GrepLine{Line: c.no + 1, Text: text(c)})
		}
		slices.Reverse(before[n:])
		gf.Lines = append(before, GrepLine{Line: l.no + 1, Text: text(l), IsMatch: true})
		last = l.no
		to := l.no + o.Context
		if k+1 < len(matches) {
			to = min(to, matches[k+1].no-1)
		}
		for c, ok := nextLine(data, l); ok && c.no <= to; c, ok = nextLine(data, c) {
			gf.Lines = append(gf.Lines, GrepLine{Line: c.no + 1, Text: text(c)})
			last = c.no
		}
	}
	return gf, true
}
