package config

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Live holds the current settings and reloads them when a watched file
// changes. Readers call Current, which is one atomic load.
type Live struct {
	paths    []string
	validate Validator
	log      *slog.Logger
	current  atomic.Pointer[Settings]
	onChange func(Settings)
	// debounce coalesces the burst of events an editor's save produces
	// (truncate+write, or write-temp+rename).
	debounce time.Duration
	watching chan struct{}
	// watched, when set (by tests), receives the watched directories
	// after Watch has set up or moved its watches.
	watched func(dirs []string)
}

// NewLive loads paths once. A bad file at start-up is an error: the daemon
// should not start on a configuration it cannot read.
func NewLive(paths []string, validate Validator, log *slog.Logger) (*Live, error) {
	s, err := Load(paths, validate)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Live{paths: paths, validate: validate, log: log, debounce: 50 * time.Millisecond, watching: make(chan struct{})}
	l.current.Store(&s)
	return l, nil
}

// Current returns the settings in force.
func (l *Live) Current() Settings { return *l.current.Load() }

// OnChange registers f to run after every successful reload, with the new
// settings. Register before Watch.
func (l *Live) OnChange(f func(Settings)) { l.onChange = f }

// Reload reads the files again. On success the new settings replace the old
// and OnChange runs; on failure the error is logged with its position and
// the last good settings stay.
func (l *Live) Reload() error {
	s, err := Load(l.paths, l.validate)
	if err != nil {
		l.log.Error("settings not applied; keeping the last good configuration", "err", err)
		return err
	}
	l.current.Store(&s)
	if l.onChange != nil {
		l.onChange(s)
	}
	// Logged once OnChange has put the settings in force: a reader of
	// the log (or a test) may rely on them from this line on.
	l.log.Info("settings reloaded")
	return nil
}

// Watching is closed once Watch has set up its watches: a change made after
// that is seen.
func (l *Live) Watching() <-chan struct{} { return l.watching }

// Watch reloads on every change of a watched file until ctx ends. It watches
// the files' directories, not the files, so that a save by rename (write a
// temporary file, rename it over the original) is seen, and so that a file
// created after start-up is picked up.
//
// A file whose directory does not exist yet (a fresh machine has no
// ~/.config/dshd/ and no <cwd>/.dshd/) is followed through its nearest
// existing ancestor: when the next missing directory appears, created or
// renamed into place, the watch moves down to it, as far as the directories
// now exist, and a settings file already there is loaded at once. When a
// watched directory is removed or renamed away, the watch falls back to the
// nearest ancestor that still exists. Only one directory per file is
// watched, never a whole tree.
func (l *Live) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	dw := newDirWatch(w, l.paths, l.log)
	dw.sync()
	if l.watched != nil {
		l.watched(dw.list())
	}
	close(l.watching)
	var timer *time.Timer
	var fire <-chan time.Time
	schedule := func() {
		if timer == nil {
			timer = time.NewTimer(l.debounce)
		} else {
			timer.Reset(l.debounce)
		}
		fire = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			name := filepath.Clean(ev.Name)
			if dw.onPath[name] && ev.Op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0 {
				if dw.watched[name] && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
					dw.forget(name)
				}
				if dw.sync() {
					schedule()
				}
				if l.watched != nil {
					l.watched(dw.list())
				}
			}
			if !dw.files[name] || ev.Op == fsnotify.Chmod {
				continue
			}
			schedule()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			l.log.Warn("settings watcher", "err", err)
		case <-fire:
			fire = nil
			_ = l.Reload() // logged by Reload
		}
	}
}

// dirWatch keeps one fsnotify watch per settings file on the deepest
// existing directory of the file's path: the file's own directory when it
// exists, else the nearest ancestor, whose events tell when the next path
// component appears.
type dirWatch struct {
	w       *fsnotify.Watcher
	log     *slog.Logger
	targets []*watchTarget
	// files holds the settings files' absolute paths, onPath their
	// directories and all their ancestors: the paths whose creation or
	// removal can move a watch.
	files, onPath map[string]bool
	// watched holds the directories watched now.
	watched map[string]bool
}

type watchTarget struct {
	file, dir string
	// atDir tells whether the file's own directory was watched after the
	// last sync.
	atDir bool
}

func newDirWatch(w *fsnotify.Watcher, paths []string, log *slog.Logger) *dirWatch {
	dw := &dirWatch{w: w, log: log, files: map[string]bool{}, onPath: map[string]bool{}, watched: map[string]bool{}}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			log.Debug("settings file not watched", "path", p, "err", err)
			continue
		}
		if dw.files[abs] {
			continue
		}
		dw.files[abs] = true
		t := &watchTarget{file: abs, dir: filepath.Dir(abs)}
		dw.targets = append(dw.targets, t)
		for d := t.dir; !dw.onPath[d]; d = filepath.Dir(d) {
			dw.onPath[d] = true
		}
	}
	return dw
}

// maxSyncRounds bounds the re-checks of one sync. Each round that changes
// something descends at least one level unless directories are being
// created and removed under it as it runs; then the next event syncs again.
const maxSyncRounds = 64

// sync points every target's watch at its deepest existing directory and
// drops watches no target needs. After adding a watch it looks again,
// because mkdir -p may have created deeper levels before the watch was in
// place, and their creation was then seen by no one. It reports whether a
// settings file may have appeared or disappeared with the watches moved, so
// the caller should reload.
func (dw *dirWatch) sync() (reload bool) {
	added := map[string]bool{}
	for range maxSyncRounds {
		want := make(map[string]bool, len(dw.targets))
		for _, t := range dw.targets {
			want[nearestDir(t.dir)] = true
		}
		changed := false
		for d := range want {
			if dw.watched[d] {
				continue
			}
			if err := dw.w.Add(d); err != nil {
				if _, statErr := os.Stat(d); statErr != nil {
					changed = true // removed since we looked: look again
					continue
				}
				dw.log.Warn("settings directory not watched", "dir", d, "err", err)
				continue
			}
			dw.log.Debug("watching settings directory", "dir", d)
			dw.watched[d] = true
			added[d] = true
			changed = true
		}
		for d := range dw.watched {
			if !want[d] {
				dw.forget(d)
			}
		}
		if !changed {
			break
		}
	}
	for _, t := range dw.targets {
		atDir := dw.watched[t.dir]
		switch {
		case atDir && added[t.dir] && fileExists(t.file):
			reload = true // appeared with its directory, or before we watched it
		case t.atDir && !atDir:
			reload = true // its directory went away, and the file with it
		}
		t.atDir = atDir
	}
	return reload
}

// forget drops the watch of dir. The watch may already be gone: inotify
// ends it when the directory is removed.
func (dw *dirWatch) forget(dir string) {
	delete(dw.watched, dir)
	_ = dw.w.Remove(dir)
}

// list returns the watched directories, sorted.
func (dw *dirWatch) list() []string {
	return slices.Sorted(maps.Keys(dw.watched))
}

// nearestDir returns dir when it is an existing directory, else its nearest
// ancestor that is.
func nearestDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
