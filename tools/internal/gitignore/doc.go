// Package gitignore matches paths against .gitignore patterns: comments,
// escapes, negation (!), directory-only patterns (trailing /), anchored
// patterns (a leading or inner /), and ** in every position git allows. It
// also exports the segment matcher ([MatchPath]) that the glob tool uses for
// its own ** patterns, so both agree on what * and ** mean.
package gitignore
