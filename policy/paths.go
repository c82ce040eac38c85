package policy

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/dsh-tools/dshd/registry"
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
	return matchPathView(pattern, &subjectView{Subject: registry.Subject{Kind: registry.SubjectPath, Value: subject}, cwd: cwd}, home)
}

func matchPathView(pattern string, v *subjectView, home string) bool {
	resolved, segments := v.path()
	if pattern == "**" || strings.HasPrefix(pattern, "**/") {
		// Unanchored: matches wherever the path is.
		return matchSegments(path.Clean(pattern), segments)
	}
	pat, ok := resolvePattern(pattern, v.cwd, home)
	if !ok || path.IsAbs(pat) != path.IsAbs(resolved) {
		return false
	}
	return matchSegments(strings.TrimPrefix(pat, "/"), segments)
}

// matchSegments matches path segments against a cleaned, relative pattern
// whose segments are separated by '/', `**` standing for zero or more
// segments.
func matchSegments(pat string, sub []string) bool {
	if pat == "." || pat == "" {
		return len(sub) == 0
	}
	for pat != "" {
		seg, rest, _ := strings.Cut(pat, "/")
		if seg == "**" {
			pat = rest
			for pat == "**" || strings.HasPrefix(pat, "**/") {
				pat = strings.TrimPrefix(pat[2:], "/")
			}
			if pat == "" {
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
		if ok, err := path.Match(seg, sub[0]); err != nil || !ok {
			return false
		}
		pat, sub = rest, sub[1:]
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
