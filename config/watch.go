package config

import (
	"context"
	"log/slog"
	"path/filepath"
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
	l.log.Info("settings reloaded")
	if l.onChange != nil {
		l.onChange(s)
	}
	return nil
}

// Watching is closed once Watch has set up its watches: a change made after
// that is seen.
func (l *Live) Watching() <-chan struct{} { return l.watching }

// Watch reloads on every change of a watched file until ctx ends. It watches
// the files' directories, not the files, so that a save by rename (write a
// temporary file, rename it over the original) is seen, and so that a file
// created after start-up is picked up. Directories that do not exist are
// skipped.
func (l *Live) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	names := make(map[string]bool, len(l.paths))
	dirs := make(map[string]bool)
	for _, p := range l.paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		names[abs] = true
		dir := filepath.Dir(abs)
		if !dirs[dir] {
			if err := w.Add(dir); err != nil {
				l.log.Debug("settings directory not watched", "dir", dir, "err", err)
				continue
			}
			dirs[dir] = true
		}
	}
	close(l.watching)
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !names[filepath.Clean(ev.Name)] || ev.Op == fsnotify.Chmod {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(l.debounce)
			} else {
				timer.Reset(l.debounce)
			}
			fire = timer.C
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
