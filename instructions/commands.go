package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
)

// Command is a custom slash command: a Markdown file whose body is a
// prompt template.
type Command struct {
	// Name is the file name without ".md": the command is /Name.
	Name string
	// Description is the front matter's description (or the body's first
	// line when there is none).
	Description string
	// ArgumentHint, optional, is shown by the editor as the input hint.
	ArgumentHint string
	// Path is the file; Template its body.
	Path     string
	Template string
	// User is true for a command of the user's configuration directory.
	User bool
}

// commandName is what may follow the slash.
var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// placeholder matches $ARGUMENTS and $1 … $9.
var placeholder = regexp.MustCompile(`\$(ARGUMENTS|[1-9])`)

// Expand fills the template with the arguments typed after the command:
// $ARGUMENTS is the whole argument text, $1 … $9 its words (split like a
// shell would, with single or double quotes grouping words; a missing one
// is empty). A template without any placeholder gets non-empty arguments
// appended, so they are never lost.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := SplitArguments(args)
	used := false
	out := placeholder.ReplaceAllStringFunc(c.Template, func(m string) string {
		used = true
		if m == "$ARGUMENTS" {
			return args
		}
		i := int(m[1] - '1')
		if i < len(words) {
			return words[i]
		}
		return ""
	})
	if !used && args != "" {
		out = strings.TrimRight(out, "\n") + "\n\nArguments: " + args
	}
	return out
}

// SplitArguments splits an argument text into words at blanks; single or
// double quotes group words and are removed; a backslash outside single
// quotes escapes the next character.
func SplitArguments(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// loadCommands reads the *.md files of dirs; earlier directories win over
// later ones for the same name.
func loadCommands(dirs []sourceDir) ([]Command, []Problem) {
	return loadEach(dirs, "command", func(n string) string { return "command /" + n }, func(c Command) string { return c.Name },
		func(d sourceDir, e fs.DirEntry) (string, Command, error) {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				return "", Command{}, nil
			}
			path := filepath.Join(d.dir, e.Name())
			c, err := parseCommand(d.base, path, d.user)
			return path, c, err
		})
}

func parseCommand(base, path string, user bool) (Command, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".md")
	if !commandName.MatchString(name) {
		return Command{}, fmt.Errorf("%q is not a usable command name (letters, digits, '-', '_' and '.', starting with a letter or digit)", name)
	}
	text, _, err := readBounded(base, path)
	if err != nil {
		return Command{}, err
	}
	fm, body, err := ParseFrontMatter([]byte(text))
	if err != nil {
		return Command{}, err
	}
	desc, _, err := fm.String("description")
	if err != nil {
		return Command{}, err
	}
	hint, _, err := fm.String("argument-hint")
	if err != nil {
		return Command{}, err
	}
	if strings.TrimSpace(body) == "" {
		return Command{}, errors.New("the command has no prompt text")
	}
	desc = strings.TrimSpace(desc)
	if desc == "" {
		desc = firstLine(body)
	}
	return Command{Name: name, Description: desc, ArgumentHint: strings.TrimSpace(hint), Path: path, Template: body, User: user}, nil
}

// firstLine is the first non-blank line of s without Markdown heading
// marks, cut to 100 bytes.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line != "" {
			return cutText(line, 100)
		}
	}
	return ""
}
