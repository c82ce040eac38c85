package bridge

import (
	"path/filepath"
	"strings"
)

// absPath resolves p against cwd and cleans it. Protocol paths must be
// absolute, so every location and diff path goes through here.
func absPath(cwd, p string) string {
	if p == "" {
		return cwd
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// relPath shows p relative to cwd when it lies inside cwd; paths outside
// stay absolute so the user sees where they really are.
func relPath(cwd, p string) string {
	if cwd == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(cwd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

// Characters that may precede a path in a title, and that end one.
const (
	titlePathBefore = " \t`'\"([{<:=,"
	titlePathEnd    = " \t`'\")]}>:,"
)

// relTitle rewrites the absolute paths of a card title that lie inside cwd
// as cwd-relative ones ("Edit /home/u/proj/main.go" → "Edit main.go").
// A path counts when it starts the title or follows a separator character
// (so "/x/home/u/proj" is no path into cwd) and ends at one. Inside or
// outside is decided on the cleaned path: "/home/u/proj/../../etc/passwd"
// lies outside and is shown cleaned and absolute ("/etc/passwd"), so the
// user sees where it really is. Paths that have nothing to do with cwd
// are left exactly as written.
func relTitle(cwd, title string) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return title
	}
	cwd = filepath.Clean(cwd)
	// Any path that names cwd, even uncleanly, holds cwd's last element.
	if cwd == string(filepath.Separator) || !strings.Contains(title, filepath.Base(cwd)) {
		return title
	}
	var b strings.Builder
	rest := title
	for {
		i := pathStart(rest)
		if i < 0 {
			if b.Len() == 0 {
				return title // nothing rewritten
			}
			b.WriteString(rest)
			return b.String()
		}
		j := strings.IndexAny(rest[i:], titlePathEnd)
		if j < 0 {
			j = len(rest)
		} else {
			j += i
		}
		b.WriteString(rest[:i])
		b.WriteString(relTitlePath(cwd, rest[i:j]))
		rest = rest[j:]
	}
}

// pathStart returns the index of the first absolute path in s that starts
// s or follows a separator character, or -1.
func pathStart(s string) int {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], filepath.Separator)
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || strings.IndexByte(titlePathBefore, s[i-1]) >= 0 {
			return i
		}
		off = i + 1
	}
}

// relTitlePath shows one absolute path of a title: relative when its
// cleaned form lies inside cwd (cwd itself is "."), cleaned when it was
// written as a path under cwd that leaves it, else as written.
func relTitlePath(cwd, p string) string {
	clean := filepath.Clean(p)
	if clean == cwd {
		return "."
	}
	if rel, ok := strings.CutPrefix(clean, cwd+string(filepath.Separator)); ok {
		return rel
	}
	if p == cwd || strings.HasPrefix(p, cwd+string(filepath.Separator)) {
		return clean // "cwd/../x" escapes: show where it really points
	}
	return p
}
