package policy

import (
	"path"
	"strings"
)

// What a deny rule compares a command with: the simple commands it runs,
// each as its program's base name followed by its arguments, after the
// shell's quote removal and with wrapper commands looked through. Like
// [Segments] this is best effort (docs/rough_edges.md says what it cannot
// see); the OS sandbox is what contains a command.

// maxCommandDepth bounds how deeply `sh -c '…'` scripts are unwrapped.
const maxCommandDepth = 4

// ResolvedCommands returns the simple commands cmd runs as deny and ask
// rules compare them: for every segment ([Segments]), the words unquoted
// (`'rm'`, `"rm"` and `\rm` are rm), leading assignments dropped, wrapper
// commands and their options looked through (env, nice, nohup, timeout,
// command, exec, builtin, sudo, doas, xargs, time, stdbuf, ionice,
// setsid, and find's -exec), the program named by its base name (/bin/rm
// is rm), and the script of `sh -c`, `bash -c` (and the other shells) and
// eval split the same way. A wrapper is kept as a command of its own too,
// so a rule naming it (`bash(sudo *)`) still matches.
func ResolvedCommands(cmd string) []string {
	var out []string
	resolveInto(&out, cmd, 0)
	return out
}

func resolveInto(out *[]string, cmd string, depth int) {
	if depth > maxCommandDepth {
		return
	}
	for _, seg := range splitSegments(cmd, false) {
		resolveWords(out, shellWords(seg), depth)
	}
}

// resolveWords appends the commands one simple command's words run.
func resolveWords(out *[]string, words []string, depth int) {
	for len(words) > 0 {
		for len(words) > 0 && (isAssignment(words[0]) || segmentLeaders[words[0]] && !wrapperNames[words[0]]) {
			words = words[1:]
		}
		if len(words) == 0 {
			return
		}
		name := path.Base(words[0])
		if name == "." || name == "/" {
			name = words[0]
		}
		*out = append(*out, strings.Join(append([]string{name}, words[1:]...), " "))
		switch {
		case shells[name]:
			if script, ok := shellScript(words[1:]); ok {
				resolveInto(out, script, depth+1)
			}
			return
		case name == "eval":
			resolveInto(out, strings.Join(words[1:], " "), depth+1)
			return
		case name == "find":
			for i, w := range words {
				if w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir" {
					resolveWords(out, words[i+1:], depth+1)
				}
			}
			return
		}
		skip, ok := wrapperArgs(name, words[1:])
		if !ok {
			return
		}
		words = words[1+skip:]
	}
}

// shells run the script given after -c (alone or combined, as in -lc).
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true, "busybox": true}

// shellScript finds the script of `sh [options] -c SCRIPT`.
func shellScript(args []string) (string, bool) {
	for i, a := range args {
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return "", false
		}
		if strings.Contains(a[1:], "c") && !strings.HasPrefix(a, "--") && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// wrapperNames are the commands that run the command in their arguments.
var wrapperNames = map[string]bool{
	"env": true, "nice": true, "nohup": true, "timeout": true, "command": true, "exec": true,
	"builtin": true, "sudo": true, "doas": true, "xargs": true, "time": true, "stdbuf": true,
	"ionice": true, "setsid": true, "chrt": true, "taskset": true,
}

// wrapperOptionArgs are, per wrapper, the options that take a separate
// argument.
var wrapperOptionArgs = map[string]string{
	"env":     "uCS",
	"nice":    "n",
	"timeout": "sk",
	"exec":    "a",
	"sudo":    "ugChpDrtTU",
	"doas":    "uC",
	"xargs":   "ILnPsdEa",
	"stdbuf":  "ioe",
	"ionice":  "cnp",
}

// wrapperArgs returns how many of a wrapper's arguments precede the
// command it runs; ok is false when name is no wrapper.
func wrapperArgs(name string, args []string) (int, bool) {
	if !wrapperNames[name] {
		return 0, false
	}
	withArg := wrapperOptionArgs[name]
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if name == "env" && isAssignment(a) {
			i++
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if strings.HasPrefix(a, "--") {
			i++
			if !strings.Contains(a, "=") && (name == "timeout" && (a == "--signal" || a == "--kill-after") ||
				name == "env" && (a == "--unset" || a == "--chdir" || a == "--split-string") ||
				name == "nice" && a == "--adjustment" || name == "sudo" && (a == "--user" || a == "--group")) {
				i++
			}
			continue
		}
		i++
		// -n 10, but not -n10; a digit-only option (nice -10) is whole.
		if last := a[len(a)-1]; strings.IndexByte(withArg, last) >= 0 && len(a) == 2 {
			i++
		}
	}
	switch name {
	case "timeout", "chrt":
		i++ // the duration (priority)
	case "taskset":
		i++ // the mask
	}
	return min(i, len(args)), true
}

// shellWords splits a simple command into words as the shell would pass
// them: blanks separate words, single quotes keep everything, double
// quotes keep everything but backslash escapes, a backslash outside quotes
// escapes the next character. An unterminated quote runs to the end
// (Segments may have cut the line inside one).
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
				break
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}
