package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// File names of instruction files, in order of preference: a directory's
// AGENTS.md is read, and its CLAUDE.md only when it has no AGENTS.md.
const (
	AgentsFile = "AGENTS.md"
	ClaudeFile = "CLAUDE.md"
)

// DefaultBudget is the default number of bytes of instruction files put
// into the system prompt (all files together).
const DefaultBudget = 32 << 10

// maxFileBytes bounds what is read of any one file, whatever the budget:
// a runaway file must not cost its whole size in memory.
const maxFileBytes = 1 << 20

// File is one instruction file as the model reads it.
type File struct {
	// Path is the file's absolute path.
	Path string
	// Dir is the directory whose files the instructions govern; empty for
	// the user-level file, which governs every project.
	Dir string
	// Text is the content, cut to the budget.
	Text string
	// Size is the file's full size in bytes; Truncated says Text is shorter.
	Size      int
	Truncated bool
}

// RepositoryRoot returns the nearest directory at or above cwd that
// contains .git (a directory, or a file as in worktrees and submodules),
// or cwd itself when there is none.
func RepositoryRoot(cwd string) string {
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}

// chainDirs returns the directories from root down to cwd, root first.
func chainDirs(root, cwd string) []string {
	var dirs []string
	for dir := cwd; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == root || filepath.Dir(dir) == dir {
			break
		}
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// readInstructionFile reads dir's AGENTS.md, or its CLAUDE.md when it has
// no AGENTS.md. ok is false when dir has neither. base confines the read
// (see readBounded).
func readInstructionFile(base, dir string) (path string, text string, size int, ok bool, err error) {
	for _, name := range []string{AgentsFile, ClaudeFile} {
		p := filepath.Join(dir, name)
		text, size, err := readBounded(base, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return p, "", 0, false, err
		}
		return p, text, size, true, nil
	}
	return "", "", 0, false, nil
}

// readBounded reads at most maxFileBytes of a regular file and returns its
// full size. A non-empty base confines the read to that directory through
// os.Root: a repository's file that is a symbolic link leading out of the
// repository (to ~/.ssh/id_rsa, say) is refused, so a cloned repository
// cannot make dshd send the user's other files to the model. The user's
// own files (base "") may be links anywhere (dotfiles).
func readBounded(base, path string) (string, int, error) {
	var f *os.File
	var err error
	if base == "" {
		f, err = os.Open(path)
	} else {
		rel, rerr := filepath.Rel(base, path)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", 0, fmt.Errorf("%s is outside %s", path, base)
		}
		f, err = os.OpenInRoot(base, rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				err = fmt.Errorf("not read: it leads outside %s (%w)", base, err)
			}
		}
	}
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes))
	if err != nil {
		return "", 0, err
	}
	return string(data), int(fi.Size()), nil
}

// applyBudget cuts the files' texts so that together they fit budget
// bytes: every file gets an equal share, and what a short file leaves
// unused goes to the others. A cut falls at a line end where possible and
// always at a character boundary; the file is then marked Truncated.
func applyBudget(files []File, budget int) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	total := 0
	for _, f := range files {
		total += len(f.Text)
	}
	if total <= budget {
		for i := range files {
			files[i].Truncated = len(files[i].Text) < files[i].Size
		}
		return
	}
	// Water-filling: hand out the budget in equal shares, smallest first.
	share := make([]int, len(files))
	left, open := budget, len(files)
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(files[a].Text) - len(files[b].Text) })
	for _, i := range order {
		fair := left / open
		share[i] = min(len(files[i].Text), fair)
		left -= share[i]
		open--
	}
	for i := range files {
		if share[i] < len(files[i].Text) {
			files[i].Text = cutText(files[i].Text, share[i])
		}
		files[i].Truncated = len(files[i].Text) < files[i].Size
	}
}

// cutText returns a prefix of s of at most n bytes, ending at a line end
// when one lies in the last quarter, and never inside a character.
func cutText(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= 0 && nl >= cut*3/4 {
		cut = nl + 1
	}
	return s[:cut]
}
