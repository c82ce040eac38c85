// Package atomicfile replaces a file so that a reader, or a failed write,
// finds the old content or the new, never half of one: the data goes to a
// temporary file beside the target, which is renamed over it. It is the
// one atomic writer of the module: the daemon's own files ([Write], which
// also syncs the file and its directory so the rename survives a crash)
// and the files tools change inside a session root ([WriteIn], beneath
// the root's [os.Root], through host.Landing).
//
//	err := atomicfile.Write(".dshd/settings.local.json", data, 0o644)
//
// The temporary file is named ".<name>.tmp-<random>" in the target's
// directory (so a .gitignore can name it) and is removed when anything
// fails.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dsh-tools/dshd/internal/openfile"
)

// Write puts data at path with the given permission bits, atomically and
// durably (the file and its directory are synced). The directory must
// exist.
func Write(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := write(r, filepath.Base(path), data, mode, true); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// WriteIn puts data at name, a path relative to r, with the given
// permission bits, atomically; the directory must exist. It does not sync:
// it serves edits of the user's files, which (like an editor's save) may
// be lost by a crash right after, but are never left half written.
func WriteIn(r *os.Root, name string, data []byte, mode fs.FileMode) error {
	return write(r, name, data, mode, false)
}

// beforeRename, when set (by tests), runs after the temporary file is
// written and closed; an error it returns fails the write there.
var beforeRename func() error

func write(r *os.Root, name string, data []byte, mode fs.FileMode, sync bool) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+hex.EncodeToString(rnd[:]))
	// O_NONBLOCK changes nothing for the new regular file and spares os
	// its four fcntl calls (see openfile.Nonblock).
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openfile.Nonblock, mode.Perm())
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			_ = r.Remove(tmp)
		}
	}()
	// Before the data, so a 0600 file is never readable more widely (the
	// umask may have narrowed the mode OpenFile gave it, too).
	if err := f.Chmod(mode.Perm()); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := r.Rename(tmp, name); err != nil {
		return err
	}
	renamed = true
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
