package policy

import (
	"path"
	"path/filepath"
	"strings"
)

// resolvePath makes p absolute against cwd (when relative and cwd is set)
// and cleans it, with forward slashes.
func resolvePath(p, cwd string) string {
	p = filepath.ToSlash(p)
	if !path.IsAbs(p) && cwd != "" {
		p = path.Join(filepath.ToSlash(cwd), p)
	}
	return path.Clean(p)
}

// resolvePattern resolves a path pattern like resolvePath, expanding a
// leading `~` to home. It reports false when the pattern needs a home
// directory that is unknown.
func resolvePattern(pattern, cwd, home string) (string, bool) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "~" || strings.HasPrefix(pattern, "~/") {
		if home == "" {
			return "", false
		}
		pattern = path.Join(filepath.ToSlash(home), pattern[1:])
	}
	return resolvePath(pattern, cwd), true
}

// splitPath splits a cleaned path into segments; the root has none.
func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// matchPath reports whether the subject path matches the path pattern
// (see the package documentation).
func matchPath(pattern, subject, cwd, home string) bool {
	pat, ok := resolvePattern(pattern, cwd, home)
	if !ok {
		return false
	}
	sub := resolvePath(subject, cwd)
	if path.IsAbs(pat) != path.IsAbs(sub) {
		return false
	}
	return matchSegments(splitPath(pat), splitPath(sub))
}

// matchSegments matches path segments against pattern segments, `**`
// standing for zero or more segments.
func matchSegments(pat, sub []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(sub); i++ {
				if matchSegments(pat, sub[i:]) {
					return true
				}
			}
			return false
		}
		if len(sub) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], sub[0]); err != nil || !ok {
			return false
		}
		pat, sub = pat[1:], sub[1:]
	}
	return len(sub) == 0
}

// escapeGlob escapes the path.Match metacharacters of a literal path.
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, `*?[\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
