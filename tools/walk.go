package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/tools/internal/gitignore"
)

// walkFunc is called for every regular file of a walk that .gitignore does
// not exclude. rel is slash-separated and relative to the walk's root.
type walkFunc func(abs, rel string, d walkEntry) error

// walkEntry is a file met by a walk: its directory entry, and the open
// directory holding it while the walk is there (nil for a root that is a
// file), which lets [walkEntry.modTime] stat it relative to that directory
// instead of resolving its whole path again.
type walkEntry struct {
	fs.DirEntry
	dir *os.File
}

// modTime is the file's modification time (of the link itself for a
// symlink), or the zero time when it cannot be read.
func (e walkEntry) modTime() time.Time {
	if e.dir != nil {
		if t, ok := statAt(e.dir, e.Name()); ok {
			return t
		}
	}
	if fi, err := e.Info(); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// errStopWalk ends a walk early without an error.
var errStopWalk = fs.SkipAll

// walkFiles visits the files under root in an unspecified order, skipping
// .git directories and whatever the .gitignore files in force exclude:
// those inside root and those of its ancestors up to the repository's top
// (the nearest directory holding .git). It does not follow symlinks to
// directories (so it cannot loop); symlinked files are visited.
func walkFiles(ctx context.Context, root string, fn walkFunc) error {
	stack := ancestorIgnores(root)
	err := walkDir(ctx, root, "", stack, fn)
	if err == errStopWalk {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, dir, rel string, stack *gitignore.Stack, fn walkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil // unreadable directories are skipped, as find and grep -r do (with a message we spare the model)
	}
	defer f.Close() // kept open for walkEntry.modTime: one fd per level of depth
	entries, err := f.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			if m, err := gitignore.ParseFile(filepath.Join(dir, ".gitignore")); err == nil {
				stack = stack.Push(dir, m)
			}
			break
		}
	}
	for _, e := range entries {
		name := e.Name()
		abs := dir + string(filepath.Separator) + name
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		typ := e.Type()
		if typ.IsDir() {
			if name == ".git" || stack.Ignored(abs, true) {
				continue
			}
			if err := walkDir(ctx, abs, r, stack, fn); err != nil {
				return err
			}
			continue
		}
		if !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			continue // sockets, devices, fifos: never read them
		}
		if stack.Ignored(abs, false) {
			continue
		}
		if err := fn(abs, r, walkEntry{e, f}); err != nil {
			return err
		}
	}
	return nil
}

// ancestorIgnores loads the .gitignore files above root, up to the
// repository's top, outermost first. Outside a repository it loads none:
// a stray .gitignore in a home directory must not hide files.
func ancestorIgnores(root string) *gitignore.Stack {
	var s *gitignore.Stack
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		return s // root itself is the top
	}
	var dirs []string
	top := ""
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if top == "" {
		return s
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if m, err := gitignore.ParseFile(filepath.Join(dirs[i], ".gitignore")); err == nil && m != nil {
			s = s.Push(dirs[i], m)
		}
	}
	return s
}

// Brace expansion multiplies: {a,b}{a,b}… doubles with each group, so a
// 150-byte pattern would expand into a billion patterns and exhaust
// memory. Expansion stops with errBraceExpansion past maxBraceExpansions
// patterns or once maxBraceBytes of patterns were built; the bytes bound
// also bounds the time deeply nested braces take.
const (
	maxBraceExpansions = 1024
	maxBraceBytes      = 1 << 20
)

var errBraceExpansion = fmt.Errorf("its {a,b} alternatives expand to more than %d patterns (or %d KiB); use fewer alternatives or several searches", maxBraceExpansions, maxBraceBytes>>10)

// expandBraces expands {a,b} alternatives (nested too) into plain
// patterns; gitignore syntax has none, glob users expect them.
func expandBraces(p string) ([]string, error) {
	var e braceExpansion
	if err := e.expand(p); err != nil {
		return nil, err
	}
	return e.out, nil
}

type braceExpansion struct {
	out   []string
	bytes int // of the patterns built so far, expanded or not
}

func (e *braceExpansion) expand(p string) error {
	e.bytes += len(p)
	if e.bytes > maxBraceBytes {
		return errBraceExpansion
	}
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				for _, alt := range splitTopLevel(p[open+1 : i]) {
					if err := e.expand(p[:open] + alt + p[i+1:]); err != nil {
						return err
					}
				}
				return nil
			}
		}
	}
	if len(e.out) == maxBraceExpansions {
		return errBraceExpansion
	}
	e.out = append(e.out, p)
	return nil
}

func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// staticPrefix splits a slash-separated pattern into its leading
// directories without wildcards and the rest, so a walk can start deeper.
func staticPrefix(p string) (dir, rest string) {
	segs := strings.Split(p, "/")
	i := 0
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], `*?[{\`) {
		i++
	}
	return strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
}

// fileMatcher is a compiled glob filter: patterns without a slash match a
// file's base name at any depth, patterns with one match its path relative
// to the walk's root.
type fileMatcher struct {
	pats []string
	// anchored makes slash-free patterns match the whole relative path too
	// (a pattern such as "src/*.go" whose directory became the root).
	anchored bool
}

func newFileMatcher(pattern string) (*fileMatcher, error) {
	pats, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	return &fileMatcher{pats: pats}, nil
}

func (m *fileMatcher) match(rel string) bool {
	for _, p := range m.pats {
		if !m.anchored && !strings.Contains(p, "/") {
			base := rel
			if i := strings.LastIndexByte(rel, '/'); i >= 0 {
				base = rel[i+1:]
			}
			if gitignore.MatchPath(p, base) {
				return true
			}
			continue
		}
		if gitignore.MatchPath(p, rel) {
			return true
		}
	}
	return false
}
