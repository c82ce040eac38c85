package presentation

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// ConsoleFallback renders a terminal card for a client that has no terminal
// of its own: the output in a fenced ```console block, followed by the exit
// status when the command did not exit 0 (a non-zero exit code or a
// signal). The fence is longer than any backtick run in the output, so the
// output can never close it early.
func ConsoleFallback(card *TerminalCard) string {
	if card == nil {
		return ""
	}
	block := CodeBlock("console", card.Output)
	if status := ExitStatus(card); status != "" {
		return block + "\n\n" + status
	}
	return block
}

// CodeBlock fences text as a Markdown code block with the info string
// lang (may be empty). The fence is longer than any backtick run in text,
// so the text can never close it early.
func CodeBlock(lang, text string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	var b strings.Builder
	b.Grow(len(text) + 2*len(fence) + len(lang) + 2)
	b.WriteString(fence)
	b.WriteString(lang)
	b.WriteByte('\n')
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	return b.String()
}

// languages maps file extensions to the code block info strings editors
// highlight.
var languages = map[string]string{
	".go": "go", ".mod": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp",
	".cpp": "cpp", ".hpp": "cpp", ".java": "java", ".kt": "kotlin", ".swift": "swift", ".rb": "ruby",
	".php": "php", ".cs": "csharp", ".lua": "lua", ".sh": "bash", ".bash": "bash", ".zsh": "zsh",
	".fish": "fish", ".ps1": "powershell", ".md": "markdown", ".markdown": "markdown", ".json": "json",
	".jsonl": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".xml": "xml",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sql": "sql", ".proto": "protobuf",
	".tf": "hcl", ".nix": "nix", ".zig": "zig", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
	".hs": "haskell", ".ml": "ocaml", ".scala": "scala", ".dart": "dart", ".r": "r", ".vue": "vue",
	".svelte": "svelte", ".diff": "diff", ".patch": "diff", ".dockerfile": "dockerfile",
}

// LanguageOf returns the code block info string for a file by its name
// ("go" for main.go, "makefile" for Makefile), or "" when unknown.
func LanguageOf(path string) string {
	base := filepath.Base(path)
	switch strings.ToLower(base) {
	case "makefile", "gnumakefile":
		return "makefile"
	case "dockerfile", "containerfile":
		return "dockerfile"
	}
	return languages[strings.ToLower(filepath.Ext(base))]
}

// ExitStatus describes how a terminal card's command ended when that is
// worth saying: "Exited with code 2", "Killed by signal SIGKILL", or "" for
// exit code 0 or an unknown end.
func ExitStatus(card *TerminalCard) string {
	switch {
	case card == nil:
		return ""
	case card.Signal != "":
		return "Killed by signal " + card.Signal
	case card.ExitCode != nil && *card.ExitCode != 0:
		return fmt.Sprintf("Exited with code %d", *card.ExitCode)
	}
	return ""
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// RelativePath returns path relative to cwd when path is inside cwd (cwd
// itself becomes "."), and path unchanged otherwise: outside the cwd, on
// another volume, or when either is not absolute. It is for display only;
// locations keep absolute paths.
func RelativePath(cwd, path string) string {
	if cwd == "" || !filepath.IsAbs(cwd) || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(filepath.Clean(cwd), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// RelativeTitle rewrites a card title for display: every occurrence of one
// of paths (typically the card's locations) that lies inside cwd is
// replaced by its RelativePath. Longer paths are replaced first, so a path
// that is a prefix of another cannot cut into it, and an occurrence counts
// only where it is not followed by more path characters (so "/w/a" does not
// rewrite "/w/ab"). Paths outside cwd stay absolute.
func RelativeTitle(cwd, title string, paths ...string) string {
	sorted := append([]string(nil), paths...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, p := range sorted {
		rel := RelativePath(cwd, p)
		if p == "" || rel == p {
			continue
		}
		title = replaceWhole(title, p, rel)
	}
	return title
}

// replaceWhole replaces old by repl where old is not immediately followed by
// a character that would continue a path name. Replaced text is not
// rescanned.
func replaceWhole(s, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		if continuesAt(s, end) {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s = s[end:]
	}
}

// continuesAt reports whether s[i:] continues a path name: a name
// character, or a dot followed by one ("a" in "a.go", but not the full stop
// of a sentence).
func continuesAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if s[i] == '.' {
		return i+1 < len(s) && continuesPath(s[i+1])
	}
	return continuesPath(s[i])
}

func continuesPath(c byte) bool {
	switch {
	case c == '/' || c == '\\' || c == '_' || c == '-':
		return true
	case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case c >= 0x80: // a multi-byte character of a longer name
		return true
	}
	return false
}
