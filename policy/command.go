package policy

import (
	"path"
	"strings"

	"github.com/dsh-tools/dshd/registry"
)

// Compound reports whether a shell command line does more than run one
// simple command, so that a command-prefix rule cannot vouch for it. It is
// deliberately conservative and ignores quoting: anywhere in the line,
// these make a command compound:
//
//   - chaining and pipes: `&&`, `||`, `;`, `|`, a background `&`
//   - substitution: a backtick, `$(`, `<(`, `>(`
//   - line breaks and other control characters except tab
//   - output redirection to a file (`>`, `>>`, `&>`, `>|`); duplicating a
//     descriptor (`2>&1`, `>&-`, `<&0`) is fine
//
// A quoted `;` therefore makes a command compound too: an allow rule then
// asks instead, which is safe.
func Compound(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\t':
		case c < 0x20 || c == 0x7f:
			return true
		case c == ';' || c == '|' || c == '`' || c == '&':
			return true
		case c == '$' || c == '<':
			if i+1 < len(cmd) && cmd[i+1] == '(' {
				return true
			}
			if c == '<' && i+1 < len(cmd) && cmd[i+1] == '&' {
				n, ok := descriptorTarget(cmd[i+2:])
				if !ok {
					return true
				}
				i += 1 + n
			}
		case c == '>':
			if i+1 < len(cmd) && cmd[i+1] == '&' {
				n, ok := descriptorTarget(cmd[i+2:])
				if !ok {
					return true
				}
				i += 1 + n
				continue
			}
			return true
		}
	}
	return false
}

// descriptorTarget reports whether s starts with the target of a
// descriptor duplication (digits, or `-`) followed by a blank or the end,
// and how many bytes it spans.
func descriptorTarget(s string) (int, bool) {
	n := 0
	if len(s) > 0 && s[0] == '-' {
		n = 1
	} else {
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0, false
	}
	return n, true
}

// segmentLeaders are words that only introduce the command that follows
// them; a segment is also matched with them stripped.
var segmentLeaders = map[string]bool{
	"!": true, "if": true, "then": true, "elif": true, "else": true, "do": true,
	"while": true, "until": true, "time": true, "exec": true, "command": true,
	"builtin": true, "nohup": true, "sudo": true, "env": true, "xargs": true,
}

// Segments splits a command line into the simple commands it may run, for
// deny and ask rules: it cuts at every chaining, pipe, substitution,
// grouping and line-break character (ignoring quotes, so it may cut too
// often, never too rarely), collapses blanks, and strips leading
// variable assignments and leader words such as `sudo`, `env` or `then`.
// Empty segments are dropped. It is best effort, not a shell parser.
func Segments(cmd string) []string { return splitSegments(cmd, true) }

// splitSegments is [Segments]; strip says whether leader words and leading
// assignments are dropped.
func splitSegments(cmd string, strip bool) []string {
	parts := strings.FieldsFunc(cmd, func(r rune) bool {
		switch r {
		case ';', '|', '&', '\n', '\r', '`', '(', ')', '{', '}':
			return true
		}
		return false
	})
	segments := make([]string, 0, len(parts))
	for _, part := range parts {
		words := strings.Fields(part)
		for strip && len(words) > 0 && (segmentLeaders[words[0]] || isAssignment(words[0])) {
			words = words[1:]
		}
		// Trailing `$`, `<` or `>` left over from `$(`, `<(` or `>(`.
		for len(words) > 0 {
			last := words[len(words)-1]
			trimmed := strings.TrimRight(last, "$<>")
			if trimmed == last {
				break
			}
			if trimmed == "" {
				words = words[:len(words)-1]
			} else {
				words[len(words)-1] = trimmed
				break
			}
		}
		if len(words) > 0 {
			segments = append(segments, strings.Join(words, " "))
		}
	}
	return segments
}

// isAssignment reports whether a word is a shell variable assignment
// (NAME=value).
func isAssignment(word string) bool {
	eq := strings.IndexByte(word, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := word[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// commandPattern is a parsed command-subject pattern.
type commandPattern struct {
	any    bool   // `*`: every command
	prefix string // a prefix rule's words, normalised
	exact  string // an exact rule's command, trimmed
}

func parseCommandPattern(p string) commandPattern {
	t := strings.TrimSpace(p)
	var prefix string
	switch {
	case t == "*":
		return commandPattern{any: true}
	case strings.HasSuffix(t, ":*"):
		prefix = t[:len(t)-2]
	case strings.HasSuffix(t, " *") || strings.HasSuffix(t, "\t*"):
		prefix = t[:len(t)-1]
	default:
		return commandPattern{exact: t}
	}
	prefix = normalizeCommand(prefix)
	if prefix == "" {
		return commandPattern{any: true}
	}
	return commandPattern{prefix: prefix}
}

// resolved is the pattern's command as [ResolvedCommands] spells
// commands: unquoted, the program by its base name.
func (p commandPattern) resolved() commandPattern {
	canon := func(s string) string {
		words := shellWords(s)
		if len(words) == 0 {
			return s
		}
		if base := path.Base(words[0]); base != "." && base != "/" {
			words[0] = base
		}
		return strings.Join(words, " ")
	}
	switch {
	case p.prefix != "":
		p.prefix = canon(p.prefix)
	case p.exact != "":
		p.exact = canon(p.exact)
	}
	return p
}

// matchSimple reports whether one simple (normalised) command matches a
// prefix or any pattern.
func (p commandPattern) matchSimple(normalized string) bool {
	if p.any {
		return normalized != ""
	}
	return normalized == p.prefix || strings.HasPrefix(normalized, p.prefix+" ")
}

// addsCodeOption reports whether a command a prefix rule matched passes,
// after the prefix, an option that runs a program of its choosing
// (`go test -exec …`, `git status --upload-pack=…`): a prefix allow rule
// never vouches for that, so two remembered rules cannot compose into
// running code.
func (p commandPattern) addsCodeOption(normalized string) bool {
	if p.any {
		return hasCodeOption(firstWord(normalized), strings.Fields(normalized))
	}
	rest := strings.TrimPrefix(normalized, p.prefix)
	return hasCodeOption(firstWord(normalized), shellWords(rest))
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return path.Base(w)
}

// matches reports whether the command matches the pattern. Restrictive
// (deny, ask) matching also looks at every segment; permissive (allow)
// matching refuses compound commands unless the pattern is exact.
func (p commandPattern) matches(cmd *subjectView, restrictive bool) bool {
	if p.exact != "" {
		if strings.TrimSpace(cmd.Value) == p.exact {
			return true
		}
		if !restrictive {
			return false
		}
		exact := normalizeCommand(p.exact)
		for _, seg := range cmd.commandSegments() {
			if seg == exact {
				return true
			}
		}
		canon := p.resolved().exact
		for _, c := range cmd.resolvedCommands() {
			if c == canon {
				return true
			}
		}
		return false
	}
	if !restrictive {
		return !cmd.isCompound() && p.matchSimple(cmd.normalizedCommand()) && !p.addsCodeOption(cmd.normalizedCommand())
	}
	if p.matchSimple(cmd.normalizedCommand()) {
		return true
	}
	for _, seg := range cmd.commandSegments() {
		if p.matchSimple(seg) {
			return true
		}
	}
	// Spelling must not dodge a deny rule: /bin/rm, \rm, 'rm', env rm and
	// sh -c 'rm …' all run rm.
	canon := p.resolved()
	for _, c := range cmd.resolvedCommands() {
		if canon.matchSimple(c) {
			return true
		}
	}
	return false
}

// matchCommand matches a command-subject pattern against a command.
func matchCommand(pattern, cmd string, restrictive bool) bool {
	return parseCommandPattern(pattern).matches(&subjectView{Subject: registry.Subject{Kind: registry.SubjectCommand, Value: cmd}}, restrictive)
}
