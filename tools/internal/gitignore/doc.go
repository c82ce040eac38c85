// Package gitignore matches paths against .gitignore patterns: comments,
// escapes, negation (!), directory-only patterns (trailing /), anchored
// patterns (a leading or inner /), and ** in every position git allows. It
// also exports the segment matcher ([MatchPath]) that the glob tool uses for
// its own ** patterns, so both agree on what * and ** mean.
//
//	m, err := gitignore.ParseFile(filepath.Join(root, ".gitignore"))
//	ignored := (*gitignore.Stack)(nil).Push(root, m).Ignored(filepath.Join(root, "bin/dshd"), false)
package gitignore
