// Package atomicfile replaces a file so that a reader, or a crash, finds
// the old content or the new, never half of one: the data goes to a
// synced temporary file beside the target, which is renamed over it, and
// the directory is synced so the rename survives a crash.
//
//	err := atomicfile.Write(".dshd/settings.local.json", data, 0o644)
//
// The temporary file is named ".<name>.tmp-*" in the target's directory
// (so a .gitignore can name it) and is removed when anything fails.
// Files inside a session root are written through host landings instead
// (beneath an os.Root); this package serves the daemon's own files.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write puts data at path with the given permission bits, atomically. The
// directory must exist.
func Write(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	// Before the data, so a 0600 file is never readable more widely.
	if err := tmp.Chmod(mode.Perm()); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable where directories can be synced (not
// on Windows, where the rename is as durable as the file system makes it).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
