package policy

import (
	"path/filepath"
	"strings"
)

// CommandPath is a word of a command line that may name a file, and the
// directory a relative one is taken from.
type CommandPath struct {
	Dir  string
	Path string
}

// CommandPaths lists the words of a shell command line that may name
// files, for guards that keep commands away from protected paths (the
// daemon's settings and state, .git internals): every word of every
// segment (see [Segments]), unquoted, cut at redirection operators and at
// `=` (`--out=FILE`, `NAME=FILE`), with $VAR, ${VAR} and a leading `~`
// expanded through env, and glob patterns expanded against the file
// system. After `cd DIR` or `pushd DIR`, relative words are taken from DIR.
//
// It is best effort, like Segments: it sees what the line says, not what a
// program computes (eval, variables set within the line, scripts, base64);
// a guard built on it narrows what commands can reach, it is no sandbox.
func CommandPaths(cmd, cwd string, env func(string) string) []CommandPath {
	if env == nil {
		env = func(string) string { return "" }
	}
	var out []CommandPath
	dir := cwd
	// Before splitting: Segments cuts at braces, which ${VAR} has. Single
	// quotes, which keep the shell from expanding, are ignored: a guard
	// may look at more than runs.
	if strings.Contains(cmd, "$") {
		cmd = expandVars(cmd, env)
	}
	for _, seg := range Segments(cmd) {
		words := strings.Fields(seg)
		for i, w := range words {
			for _, piece := range strings.FieldsFunc(unquote(w), func(r rune) bool { return r == '<' || r == '>' || r == '=' }) {
				piece = expandWord(piece, env)
				if piece == "" || isDescriptor(piece) {
					continue
				}
				out = append(out, CommandPath{Dir: dir, Path: piece})
				if strings.ContainsAny(piece, "*?[") {
					pattern := piece
					if !filepath.IsAbs(pattern) {
						pattern = filepath.Join(dir, pattern)
					}
					if matches, err := filepath.Glob(pattern); err == nil {
						for _, m := range matches {
							out = append(out, CommandPath{Dir: dir, Path: m})
						}
					}
				}
			}
			if i == 1 && (words[0] == "cd" || words[0] == "pushd") {
				if next, err := Resolve(dir, expandWord(unquote(w), env)); err == nil {
					dir = next
				}
			}
		}
	}
	return out
}

// unquote drops the shell's quote characters and backslashes: what is
// left is the word the program receives, near enough for a guard.
func unquote(w string) string {
	if !strings.ContainsAny(w, `'"\`) {
		return w
	}
	return strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(w)
}

// expandWord expands a leading ~ (as $HOME).
func expandWord(w string, env func(string) string) string {
	if w == "~" || strings.HasPrefix(w, "~/") {
		return env("HOME") + w[1:]
	}
	return w
}

// expandVars is os.Expand without its special cases for $1, $* and the
// like, which a guard need not tell apart from text.
func expandVars(s string, env func(string) string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		name, n := "", 0
		if s[i+1] == '{' {
			if end := strings.IndexByte(s[i+2:], '}'); end >= 0 {
				name, n = s[i+2:i+2+end], end+3
			}
		} else {
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
				j++
			}
			name, n = s[i+1:j], j-i
		}
		if name == "" {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(env(name))
		i += n - 1
	}
	return b.String()
}

// isDescriptor reports a word that is only a file descriptor number or
// `&N` / `&-` (the target of a duplication), not a file.
func isDescriptor(w string) bool {
	w = strings.TrimPrefix(w, "&")
	if w == "-" {
		return true
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}
