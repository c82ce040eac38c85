package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dsh-tools/dshd/internal/pathstyle"
)

// Root confinement and protected paths: what a call may touch, decided on
// the path the kernel would open, not on the text the model wrote. These
// are the only implementations; the bridge's guards and the tools both use
// them.

// ErrSymlinkLoop is returned when resolving a path follows too many symbolic
// links.
var ErrSymlinkLoop = errors.New("too many levels of symbolic links")

// maxSymlinkHops matches Linux's limit on the links one lookup follows.
const maxSymlinkHops = 40

// maxPathBytes is Linux's PATH_MAX: the longest path a system call takes,
// its terminating NUL included.
const maxPathBytes = 4096

// Resolve returns the absolute, symlink-free form of path as the kernel would
// see it: a relative path is taken relative to base; ".." is applied after
// the symlinks before it are followed; every existing symlink along the way
// is followed, including a dangling final one (so a write through it is
// judged by where it lands). Components that do not exist yet are appended
// as written. "~" is not expanded: the shell does that, the file system does
// not, so "~/x" is a relative path naming a directory called "~".
func Resolve(base, path string) (string, error) {
	var everyTime *lookups // no memo: each call looks at the disk
	return everyTime.resolve(base, path)
}

// lookups memoises the lstat and readlink calls of the resolutions of one
// decision: a call's protected entries (the state directory, the settings
// and grants files) share most of their directories, which would
// otherwise be looked at once per entry (some 30 lstat calls a writing
// call). It lives as long as one check, never across calls, so a symlink
// made between two calls is always seen. A nil *lookups looks every time.
type lookups struct {
	seen map[string]lookup
}

// lookup is what one lstat (and, for a symlink, readlink) said of a path.
type lookup struct {
	symlink bool
	target  string
	err     error
}

func (m *lookups) lstat(path string) lookup {
	if m != nil {
		if l, ok := m.seen[path]; ok {
			return l
		}
	}
	var l lookup
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		l.err = err
	case fi.Mode()&os.ModeSymlink != 0:
		l.symlink = true
		l.target, l.err = os.Readlink(path)
	}
	if m != nil {
		if m.seen == nil {
			m.seen = map[string]lookup{}
		}
		m.seen[path] = l
	}
	return l
}

// resolve is [Resolve] through m's memo (a nil m looks every time).
func (m *lookups) resolve(base, path string) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	if !filepath.IsAbs(path) {
		if !filepath.IsAbs(base) {
			return "", fmt.Errorf("resolve %q: base %q is not absolute", path, base)
		}
		// Not filepath.Join: it would apply ".." lexically, before the
		// symlinks in front of it are followed.
		path = base + string(filepath.Separator) + path
	}
	return resolveFrom(m, "", path)
}

// resolveFrom is [Resolve] of path relative to resolvedBase, an absolute
// directory that is itself already resolved (symlink-free), so that its
// own components are not looked at again; with an empty resolvedBase,
// path must be absolute. An absolute path ignores resolvedBase.
func resolveFrom(m *lookups, resolvedBase, path string) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	full := len(path)
	resolved := string(filepath.Separator)
	if !filepath.IsAbs(path) {
		resolved = resolvedBase
		full += len(resolvedBase) + 1
	}
	if full >= maxPathBytes {
		// The kernel refuses such a path (ENAMETOOLONG); os.Root, which
		// walks one component at a time, would not.
		return "", fmt.Errorf("resolve %.60q…: %w (%d bytes, the limit is %d)", path, syscall.ENAMETOOLONG, full, maxPathBytes-1)
	}
	// An absolute path starts at its volume ("C:", `\\server\share` on
	// Windows; nothing on Unix), the root that ".." cannot climb above.
	vol := ""
	if filepath.IsAbs(path) {
		vol = filepath.VolumeName(path)
		resolved = vol + string(filepath.Separator)
	}
	rest := pathComponents(path[len(vol):])
	hops := 0
	missing := false // once a component is missing, the rest is lexical
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case ".", "":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		if missing {
			resolved = next
			continue
		}
		l := m.lstat(next)
		switch err := l.err; {
		case !l.symlink && (errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
			// A file used as a directory is "missing" too: the later open
			// fails with a clear error of its own.
			missing = true
			resolved = next
		case err != nil:
			return "", fmt.Errorf("resolve %q: %w", path, err)
		case l.symlink:
			hops++
			if hops > maxSymlinkHops {
				return "", fmt.Errorf("resolve %q: %w", path, ErrSymlinkLoop)
			}
			target := l.target
			if filepath.IsAbs(target) {
				tv := filepath.VolumeName(target)
				resolved = tv + string(filepath.Separator)
				target = target[len(tv):]
			}
			rest = append(pathComponents(target), rest...)
		default:
			resolved = next
		}
	}
	return resolved, nil
}

// pathComponents splits a file system path at its separators; empty
// components (a leading or doubled separator) are kept for the caller to
// skip.
func pathComponents(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// Confine resolves path (relative paths against roots[0], the session cwd)
// with [Resolve] and reports whether the result lies inside one of roots,
// which are resolved the same way. The bridge turns inside == false into an
// ask naming abs (or an allow in bypassPermissions); it never silently
// refuses. Comparison is byte-exact after resolution: a look-alike such as
// U+FF0F FULLWIDTH SOLIDUS is an ordinary file-name character, never a
// separator, so it cannot climb out of a root.
func Confine(roots []string, path string) (abs string, inside bool, err error) {
	if len(roots) == 0 {
		return "", false, errors.New("confine: no roots")
	}
	abs, err = Resolve(roots[0], path)
	if err != nil {
		return "", false, err
	}
	for _, r := range roots {
		rr, err := Resolve(string(filepath.Separator), r)
		if err != nil {
			continue
		}
		if within(rr, abs) {
			return abs, true, nil
		}
	}
	return abs, false, nil
}

// within reports whether the clean absolute path p is dir or lies below it.
// It compares bytes: "/a/bc" is not within "/a/b".
func within(dir, p string) bool {
	if pathstyle.Native == pathstyle.Windows {
		// Drive letters and names in any case, both separators, \\?\ forms.
		return pathstyle.Windows.Within(dir, p)
	}
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Protected reports whether a tool must never write path: anything inside
// stateDir (the daemon's durable state), any of policyFiles (settings files
// that grant permissions; a directory entry protects everything below it),
// anything inside or naming a ".git" component (repository internals,
// hooks and config that run code), and the directories that hold a
// protected entry, so that none can be created, removed, renamed or
// replaced (`mv .dshd old`, `mv evil .dshd`, a file written where the
// directory should be). A protected entry's ancestors are protected up to,
// not including, the session's working directory (base) or the user's home
// when the entry lies inside one of them, otherwise its parent directory
// only; so `.dshd` is protected but the workspace itself is not. All are
// compared after [Resolve], so a symlink or ".." cannot dodge the check,
// and case-insensitively, because macOS and Windows file systems are. A
// relative path, and a relative entry of policyFiles, is resolved against
// base (the session's working directory); an empty base means the
// process's working directory. A path that cannot be resolved is
// protected: it is not safe to write.
func Protected(base, path, stateDir string, policyFiles []string) bool {
	if base == "" {
		base, _ = os.Getwd()
	}
	var m lookups
	abs, err := m.resolve(base, path)
	if err != nil {
		return true
	}
	return protectedLanded(&m, base, abs, stateDir, policyFiles)
}

// Protected is [Protected] of abs, a path already resolved (one of the
// landing's paths), judging only the protected entries: through the
// lstat calls that landed it, so that the landing and the entries are
// judged on one view of the disk and the directories they share (the
// workspace's ancestors, most of them) are looked at once. It is as fresh
// as the landing, so a caller judges a landing it has just made (after a
// permission prompt, a new one); one check at a time. The zero Landing
// looks at the disk afresh, through a memo of this check only.
func (l Landing) Protected(base, abs, stateDir string, policyFiles []string) bool {
	if base == "" {
		base, _ = os.Getwd()
	}
	if !filepath.IsAbs(abs) {
		return true // not a landing: not safe to write
	}
	m := l.seen
	if m == nil {
		m = &lookups{}
	}
	return protectedLanded(m, base, abs, stateDir, policyFiles)
}

func protectedLanded(m *lookups, base, abs, stateDir string, policyFiles []string) bool {
	for _, comp := range pathComponents(abs) {
		// On Windows ".git." and ".git::$INDEX_ALLOCATION" open .git too.
		if strings.EqualFold(comp, ".git") || pathstyle.Native == pathstyle.Windows && pathstyle.Windows.SameName(comp, ".git") {
			return true
		}
	}
	var rbase, rhome string
	stopsResolved := false
	for _, p := range append([]string{stateDir}, policyFiles...) {
		if p == "" {
			continue
		}
		rp, err := m.resolve(base, p)
		if err != nil {
			continue
		}
		if withinFold(rp, abs) {
			return true
		}
		if len(abs) >= len(rp) || !withinFold(abs, rp) {
			continue
		}
		// abs holds the entry: protected unless it is at or above the
		// stop (resolved only now: most paths hold no protected entry).
		if !stopsResolved {
			rbase, _ = m.resolve(string(filepath.Separator), base)
			if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
				rhome, _ = m.resolve(string(filepath.Separator), home)
			}
			stopsResolved = true
		}
		if stop := ancestorStop(rp, rbase, rhome); len(abs) > len(stop) && withinFold(stop, abs) {
			return true // a directory holding the entry
		}
	}
	return false
}

// ancestorStop is the directory above which a protected entry's ancestors
// are no longer protected: the working directory or home holding it, else
// its parent's parent (so only its parent directory is protected).
func ancestorStop(entry, base, home string) string {
	for _, stop := range []string{base, home} {
		if stop != "" && stop != string(filepath.Separator) && withinFold(stop, entry) && len(stop) < len(entry) {
			return stop
		}
	}
	return filepath.Dir(filepath.Dir(entry))
}

// withinFold is [within] compared case-insensitively.
func withinFold(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	if len(p) < len(dir) || !strings.EqualFold(p[:len(dir)], dir) {
		return false
	}
	return len(p) == len(dir) || p[len(dir)] == filepath.Separator
}
