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

// relTitle rewrites every absolute path inside cwd that appears in a card
// title as a cwd-relative one ("Edit /home/u/proj/main.go" → "Edit
// main.go"). A path only counts when it starts the title or follows a
// separator character, so "/x/home/u/proj" is left alone.
func relTitle(cwd, title string) string {
	if cwd == "" || cwd == string(filepath.Separator) || !strings.Contains(title, cwd) {
		return title
	}
	var b strings.Builder
	rest := title
	for {
		i := strings.Index(rest, cwd)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := i + len(cwd)
		boundaryBefore := i == 0 || strings.ContainsRune(" \t`'\"([{<:=,", rune(rest[i-1]))
		switch {
		case boundaryBefore && j < len(rest) && rest[j] == filepath.Separator:
			b.WriteString(rest[:i])
			rest = rest[j+1:]
			if rest == "" || strings.ContainsRune(" \t`'\")]}>:,", rune(rest[0])) {
				b.WriteString(".")
			}
		case boundaryBefore && (j == len(rest) || strings.ContainsRune(" \t`'\")]}>:,", rune(rest[j]))):
			b.WriteString(rest[:i])
			b.WriteString(".")
			rest = rest[j:]
		default:
			b.WriteString(rest[:j])
			rest = rest[j:]
		}
	}
}
