package policy

import (
	"os"
	"path/filepath"
	"sync"
)

// ResolvedRoots remembers where a session's roots resolve, so that landing
// a call does not walk every component of every root again: a root is
// walked once (an lstat per component, [Resolve]), and later calls only
// check, with one stat of the root as written and one of where it
// resolved, that both still name the directory the walk found. When either
// names another directory (a symlink on the way was repointed, the root or
// one of its parents was moved or replaced), or no longer exists, the root
// is walked again. So a root still lands where the kernel would open it,
// as when it is walked at every call; what is saved is some lstat calls a
// call (a root /home/me/src/project costs four, a symlink on the way a
// readlink more).
//
// Paths beneath a root are still walked at every call: a symlink made
// inside the workspace between two calls is always seen.
//
// The zero value is ready to use, and a *ResolvedRoots may be shared by
// concurrent calls. It keeps one entry for each root it has resolved.
type ResolvedRoots struct {
	mu    sync.Mutex
	known map[string]resolvedRoot
}

// resolvedRoot is where one root resolved and the directory it was then.
type resolvedRoot struct {
	path string
	dir  os.FileInfo
}

// resolve returns where root resolves: from the memory when the root still
// names the directory it named when walked, else walked again through m.
// A nil rr walks every time.
func (rr *ResolvedRoots) resolve(m *lookups, root string) (string, error) {
	if rr == nil {
		return m.resolve(string(filepath.Separator), root)
	}
	rr.mu.Lock()
	known, ok := rr.known[root]
	rr.mu.Unlock()
	if ok && stillNames(root, known) {
		return known.path, nil
	}
	resolved, err := m.resolve(string(filepath.Separator), root)
	if err != nil {
		return "", err
	}
	// Remembered only when the root as written and where the walk ended
	// are one directory now: a change during the walk is not remembered,
	// and the next call walks again.
	if dir, ok := sameDir(root, resolved); ok {
		rr.mu.Lock()
		if rr.known == nil {
			rr.known = map[string]resolvedRoot{}
		}
		rr.known[root] = resolvedRoot{path: resolved, dir: dir}
		rr.mu.Unlock()
	}
	return resolved, nil
}

// sameDir returns the directory both root and resolved name, if they name
// one.
func sameDir(root, resolved string) (os.FileInfo, bool) {
	dir, err := os.Stat(resolved)
	if err != nil {
		return nil, false
	}
	if root == resolved {
		return dir, true
	}
	fi, err := os.Stat(root)
	return dir, err == nil && os.SameFile(fi, dir)
}

// stillNames reports whether root, as written, and the path it resolved to
// both still name known's directory.
func stillNames(root string, known resolvedRoot) bool {
	dir, ok := sameDir(root, known.path)
	return ok && os.SameFile(dir, known.dir)
}
