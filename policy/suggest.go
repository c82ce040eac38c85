package policy

import (
	"path"
	"strings"

	"github.com/dsh-tools/dshd/registry"
)

// Suggestion is what an allow_always or reject_always answer to a
// permission request remembers for a call: one rule per distinct subject
// (or one tool-wide rule for a call without subjects), and a short
// description of their scope for the option's label.
type Suggestion struct {
	// Rules are the rules to remember. Nil when no rule can be remembered
	// safely; the bridge then offers only the once options.
	Rules []Rule
	// Scope describes what the rules cover, in Markdown, for example
	// "`go test …`" or "`edit` under `src/`".
	Scope string
}

// OK reports whether the suggestion has rules to remember.
func (s Suggestion) OK() bool { return len(s.Rules) > 0 }

// Label returns the name of the allow_always (d == Allow) or reject_always
// (d == Deny) option for rules remembered in scope, for example "Always
// allow `go test …` in this project".
func (s Suggestion) Label(d Decision, scope Scope) string {
	verb := "allow"
	if d == Deny {
		verb = "reject"
	}
	return "Always " + verb + " " + s.Scope + " " + scope.Phrase()
}

// Suggest returns the rules an allow_always or reject_always grant for this
// call remembers. The same rules serve both answers. tool is the call's
// tool name, or [ClassEdits] for a call that changes files, so that the
// grant covers every file-changing tool.
//
//   - No subjects: the tool-wide rule `tool`.
//   - A tool name that a rule cannot express: no suggestion.
//   - A command: a prefix rule of the command's first word, or of its first
//     two words when the first is a tool with subcommands (go, git, npm,
//     cargo, …) and the second is a plain word: `go test ./...` gives
//     `bash(go test *)`. Commands that run other commands or are
//     destructive (sh, sudo, rm, xargs, python, …), commands starting with
//     a variable assignment or an unusual word, and compound commands (see
//     [Compound]) give the exact command instead, which a later call must
//     repeat exactly. An exact command that would read as a prefix rule
//     (it ends in `*`) cannot be remembered: the suggestion is empty.
//   - A path: every path in the file's directory and below,
//     `edit(/abs/dir/**)`, the directory made absolute against cwd; a
//     file directly in the root gives the exact file instead.
//   - Anything else: the exact value, with `*` making the value
//     unrememberable (the suggestion is empty).
func Suggest(tool string, subjects []registry.Subject, cwd string) Suggestion {
	for i := 0; i < len(tool); i++ {
		if (!isToolNameByte(tool[i]) || tool[i] == '*') && !IsClass(tool) {
			return Suggestion{} // not expressible as a rule
		}
	}
	if tool == "" {
		return Suggestion{}
	}
	if len(subjects) == 0 {
		return Suggestion{Rules: []Rule{{Tool: tool}}, Scope: "`" + tool + "`"}
	}
	var sug Suggestion
	var scopes []string
	for _, subj := range subjects {
		pattern, scope, ok := suggestPattern(tool, subj, cwd)
		if !ok {
			return Suggestion{}
		}
		r := Rule{Tool: tool, Pattern: pattern, HasPattern: true}
		if containsRule(sug.Rules, r) {
			continue
		}
		sug.Rules = append(sug.Rules, r)
		scopes = append(scopes, scope)
	}
	sug.Scope = strings.Join(scopes, " and ")
	return sug
}

func containsRule(rules []Rule, r Rule) bool {
	for _, x := range rules {
		if x == r {
			return true
		}
	}
	return false
}

func suggestPattern(tool string, subj registry.Subject, cwd string) (pattern, scope string, ok bool) {
	switch subj.Kind {
	case registry.SubjectCommand:
		return suggestCommand(subj.Value)
	case registry.SubjectPath:
		p := resolvePath(subj.Value, cwd)
		dir := path.Dir(p)
		what := "`" + tool + "`"
		if tool == ClassEdits {
			what = "file changes"
		}
		if dir == "/" || dir == "." {
			return escapeGlob(p), what + " on `" + displayPath(p, cwd) + "`", true
		}
		return escapeGlob(dir) + "/**", what + " under `" + displayPath(dir, cwd) + "/`", true
	default:
		v := subj.Value
		if strings.TrimSpace(v) == "" || strings.Contains(v, "*") {
			return "", "", false
		}
		return v, "`" + tool + "` on `" + truncate(v) + "`", true
	}
}

// displayPath shows p relative to cwd when it is inside it.
func displayPath(p, cwd string) string {
	if cwd == "" {
		return p
	}
	c := resolvePath(cwd, "")
	if p == c {
		return "."
	}
	if rest, found := strings.CutPrefix(p, strings.TrimSuffix(c, "/")+"/"); found {
		return rest
	}
	return p
}

// subcommandTools are commands whose second word picks what they do, so a
// remembered prefix keeps it.
var subcommandTools = map[string]bool{
	"go": true, "git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"cargo": true, "make": true, "docker": true, "podman": true, "kubectl": true,
	"gh": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "dotnet": true,
	"mvn": true, "gradle": true, "./gradlew": true, "bazel": true, "terraform": true,
	"helm": true, "brew": true, "deno": true, "rustup": true, "mix": true,
	"stack": true, "cabal": true, "just": true, "nix": true, "composer": true,
	"bundle": true, "rake": true, "swift": true, "zig": true, "cmake": true,
}

// exactOnlyCommands run arbitrary other commands or destroy things: a
// remembered grant for them covers the exact command only.
var exactOnlyCommands = map[string]bool{
	"rm": true, "rmdir": true, "sudo": true, "su": true, "doas": true, "dd": true,
	"mkfs": true, "chmod": true, "chown": true, "chgrp": true, "mv": true, "cp": true,
	"ln": true, "sh": true, "bash": true, "zsh": true, "fish": true, "dash": true,
	"ksh": true, "eval": true, "exec": true, "source": true, ".": true, "xargs": true,
	"env": true, "nohup": true, "timeout": true, "nice": true, "time": true,
	"command": true, "builtin": true, "find": true, "curl": true, "wget": true,
	"ssh": true, "scp": true, "rsync": true, "kill": true, "killall": true,
	"pkill": true, "shutdown": true, "reboot": true, "python": true, "python3": true,
	"node": true, "perl": true, "ruby": true, "php": true, "npx": true, "awk": true,
	"sed": true, "tee": true, "truncate": true, "shred": true,
}

func suggestCommand(cmd string) (pattern, scope string, ok bool) {
	exact := func() (string, string, bool) {
		t := strings.TrimSpace(cmd)
		if t == "" || strings.HasSuffix(t, "*") {
			return "", "", false
		}
		return t, "`" + truncate(t) + "`", true
	}
	if Compound(cmd) {
		return exact()
	}
	words := strings.Fields(cmd)
	if len(words) == 0 || !isPlainWord(words[0], true) || exactOnlyCommands[path.Base(words[0])] {
		return exact()
	}
	prefix := words[0]
	if subcommandTools[words[0]] && len(words) > 1 && isPlainWord(words[1], false) {
		prefix += " " + words[1]
	}
	return prefix + " *", "`" + prefix + " …`", true
}

// isPlainWord reports whether a command word is an ordinary name: letters,
// digits and `._:+-` (and `/` for the command itself), not an option.
func isPlainWord(w string, command bool) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == '-' || c == '+':
		case c == ':' && !command:
		case c == '/' && command:
		default:
			return false
		}
	}
	return true
}

// truncate shortens a long value for a label.
func truncate(s string) string {
	const limit = 60
	s = strings.NewReplacer("`", "'", "\n", " ", "\r", " ").Replace(s)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
