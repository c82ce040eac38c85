package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// sourceDir is one directory skills or commands are read from.
type sourceDir struct {
	dir  string
	user bool
	base string // confines reads; "" for the user's
}

// loadEach reads the entries of dirs with read, which returns the path it
// read ("" for an entry that is not a skill or command) and what it found
// there. Earlier directories win over later ones for the same name; the
// result is sorted by name. kind ("skill", "command") and label (how a
// name is shown to the user) word the problems.
func loadEach[T any](dirs []sourceDir, kind string, label func(name string) string, name func(T) string,
	read func(d sourceDir, e fs.DirEntry) (path string, item T, err error)) (items []T, problems []Problem) {
	definedBy := map[string]string{} // name → the path that defines it
	for _, d := range dirs {
		entries, err := os.ReadDir(d.dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				problems = append(problems, Problem{Path: d.dir, Message: err.Error()})
			}
			continue
		}
		for _, e := range entries {
			path, item, err := read(d, e)
			switch {
			case path == "":
			case err != nil:
				problems = append(problems, Problem{Path: path, Message: kind + " skipped: " + err.Error()})
			case definedBy[name(item)] != "":
				problems = append(problems, Problem{Path: path, Message: fmt.Sprintf("%s skipped: %s defines it too and wins", label(name(item)), definedBy[name(item)])})
			default:
				definedBy[name(item)] = path
				items = append(items, item)
			}
		}
	}
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return items, problems
}
