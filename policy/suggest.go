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
	// Scope describes what the rules cover as plain text (clients show
	// option names as they are, not as Markdown), for example "commands
	// starting with go test" or "file changes under src/".
	Scope string
}

// OK reports whether the suggestion has rules to remember.
func (s Suggestion) OK() bool { return len(s.Rules) > 0 }

// Label returns the name of the allow_always (d == Allow) or reject_always
// (d == Deny) option for rules remembered in scope, a plain sentence such
// as "Always allow commands starting with go test in this project". It is
// the one place option names are built.
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
		return Suggestion{Rules: []Rule{{Tool: tool}}, Scope: toolPhrase(tool)}
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
		what := toolPhrase(tool)
		if dir == "/" || dir == "." {
			return escapeGlob(p), what + " on " + truncate(displayPath(p, cwd)), true
		}
		if shown := displayPath(dir, cwd); shown != "." {
			return escapeGlob(dir) + "/**", what + " under " + truncate(shown) + "/", true
		}
		return escapeGlob(dir) + "/**", what + " anywhere in the workspace", true
	default:
		v := subj.Value
		if strings.TrimSpace(v) == "" || strings.Contains(v, "*") {
			return "", "", false
		}
		return v, toolPhrase(tool) + " on " + truncate(v), true
	}
}

// toolPhrase names what calls of tool do, for a label: "file changes" for
// the edits class, otherwise "the <tool> tool".
func toolPhrase(tool string) string {
	if tool == ClassEdits {
		return "file changes"
	}
	return "the " + tool + " tool"
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
	"python2": true, "pypy": true, "pypy3": true, "lua": true, "luajit": true, "tclsh": true,
	"Rscript": true, "R": true, "julia": true, "osascript": true, "pwsh": true, "powershell": true,
	"busybox": true, "mksh": true, "csh": true, "tcsh": true, "stdbuf": true, "setsid": true,
	"ionice": true, "chrt": true, "taskset": true, "watch": true, "parallel": true,
	"strace": true, "ltrace": true, "gdb": true, "vim": true, "vi": true, "nvim": true, "emacs": true,
	"less": true, "more": true, "man": true, "tar": true, "zip": true, "unzip": true, "git-shell": true,
	"bunx": true, "pnpx": true, "uvx": true, "pipx": true,
}

func suggestCommand(cmd string) (pattern, scope string, ok bool) {
	exact := func() (string, string, bool) {
		t := strings.TrimSpace(cmd)
		if t == "" || strings.HasSuffix(t, "*") {
			return "", "", false
		}
		return t, "the exact command \"" + truncate(t) + "\"", true
	}
	if Compound(cmd) {
		return exact()
	}
	words := strings.Fields(cmd)
	if len(words) == 0 || !isPlainWord(words[0], true) || exactOnlyCommands[path.Base(words[0])] || RunsCode(cmd) {
		return exact()
	}
	prefix := words[0]
	if subcommandTools[words[0]] && len(words) > 1 {
		if !isPlainWord(words[1], false) {
			// `git -c x=y status`, `git -C dir …`: options before the
			// subcommand can change what it runs; keep it exact.
			return exact()
		}
		prefix += " " + words[1]
	}
	return prefix + " *", "commands starting with " + prefix, true
}

// codeSubcommands are the subcommands, per tool, that run code of their
// arguments' choosing or change what later commands run (git config
// core.fsmonitor, go env -w GOFLAGS=-toolexec=…): a remembered grant for
// them covers the exact command only.
var codeSubcommands = map[string]map[string]bool{
	"git":     {"config": true, "submodule": true, "bisect": true, "filter-branch": true, "filter-repo": true, "difftool": true, "mergetool": true, "daemon": true, "credential": true, "hook": true, "alias": true, "replace": true, "rebase": true},
	"go":      {"env": true, "run": true, "generate": true, "tool": true},
	"npm":     {"config": true, "exec": true, "x": true, "set": true, "explore": true},
	"pnpm":    {"config": true, "exec": true, "dlx": true, "set": true},
	"yarn":    {"config": true, "exec": true, "dlx": true},
	"bun":     {"x": true, "exec": true},
	"cargo":   {"config": true, "run": true, "install": true},
	"pip":     {"config": true},
	"pip3":    {"config": true},
	"uv":      {"run": true, "tool": true},
	"docker":  {"run": true, "exec": true, "compose": true},
	"podman":  {"run": true, "exec": true},
	"kubectl": {"exec": true, "run": true, "debug": true},
	"gh":      {"alias": true, "extension": true, "config": true},
	"nix":     {"run": true, "shell": true, "develop": true},
	"deno":    {"run": true, "eval": true, "repl": true},
	"dotnet":  {"run": true},
	"make":    {},
}

// codeOptions are options that make a command run a program or a script
// they name (git's --upload-pack, find's -exec, go test's -exec and
// -toolexec), matched as a whole word or as the start of `--option=value`.
// For git, -c (a config override such as core.fsmonitor) and -u (clone's
// --upload-pack) count too.
var codeOptions = map[string]bool{
	"--upload-pack": true, "--receive-pack": true, "--exec": true, "-exec": true, "-execdir": true,
	"-ok": true, "-okdir": true, "-toolexec": true, "--config": true, "--ext-diff": true,
	"--textconv": true, "--template": true, "--eval": true, "--require": true, "--import": true,
	"--rcfile": true, "--init-file": true, "--exec-path": true, "--run": true,
}

// hasCodeOption reports whether any of the arguments of the program name
// is a code-running option (see codeOptions).
func hasCodeOption(name string, args []string) bool {
	for _, w := range args {
		opt, _, _ := strings.Cut(w, "=")
		if codeOptions[opt] {
			return true
		}
		if name == "git" && (w == "-c" || w == "-u" || strings.HasPrefix(w, "-c") && strings.Contains(w, "=")) {
			return true
		}
	}
	return false
}

// RunsCode reports whether a command's arguments can make it run code of
// their choosing, so that no remembered rule may generalise it: an
// interpreter, shell or other command runner (see [ResolvedCommands]'s
// wrappers), a subcommand such as `git config` or `go env`, or an option
// such as `--upload-pack`, `-exec` or `-c` anywhere in the command.
// It errs on the side of true: the answer only decides whether a grant is
// remembered exactly.
func RunsCode(cmd string) bool {
	words := shellWords(strings.Join(strings.Fields(cmd), " "))
	if len(words) == 0 {
		return false
	}
	if isAssignment(words[0]) {
		return true // FOO=… can change what the command runs (GIT_SSH, LD_PRELOAD)
	}
	name := path.Base(words[0])
	if exactOnlyCommands[name] || wrapperNames[name] || shells[name] {
		return true
	}
	if subs, ok := codeSubcommands[name]; ok && len(words) > 1 && subs[words[1]] {
		return true
	}
	return hasCodeOption(name, words[1:])
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

// truncate shortens a long value for a label, on one line.
func truncate(s string) string {
	const limit = 60
	s = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
