package bridge

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Root confinement and protected paths. The bridge keeps its own small
// resolver rather than importing the tools package, so that policy does
// not depend on the tool implementations it polices.

// resolve makes p absolute against cwd and resolves the symbolic links of
// its longest existing prefix; the missing rest is joined lexically (a
// file about to be created).
func resolve(cwd, p string) (string, error) {
	p = absPath(cwd, p)
	missing := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, missing), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		missing = filepath.Join(filepath.Base(cur), missing)
		cur = parent
	}
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// confine reports whether p (resolved) lies inside one of the roots
// (resolved too), and returns the resolved path.
func confine(cwd string, roots []string, p string) (string, bool, error) {
	abs, err := resolve(cwd, p)
	if err != nil {
		return "", false, err
	}
	for _, r := range roots {
		rr, err := resolve("/", r)
		if err != nil {
			continue
		}
		if inside(rr, abs) {
			return abs, true, nil
		}
	}
	return abs, false, nil
}

// protectedPath reports whether writing p must be refused: it is inside a
// .git directory, the state directory or one of the protected paths. A
// path that cannot be resolved is not safe to write either.
func protectedPath(cwd, p, stateDir string, protected []string) bool {
	abs, err := resolve(cwd, p)
	if err != nil {
		return true
	}
	for _, comp := range strings.Split(filepath.ToSlash(abs), "/") {
		if strings.EqualFold(comp, ".git") {
			return true
		}
	}
	for _, q := range append([]string{stateDir}, protected...) {
		if q == "" {
			continue
		}
		rq, err := resolve(cwd, q)
		if err != nil {
			continue
		}
		if inside(rq, abs) {
			return true
		}
	}
	return false
}
