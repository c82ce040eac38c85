package config

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWatchPicksUpFileInDirectoriesCreatedLater starts watching while the
// settings file's directory is two levels missing (a fresh machine has no
// ~/.config/dshd/), then creates both levels at once as mkdir -p does and
// writes the file: the new settings must apply.
func TestWatchPicksUpFileInDirectoriesCreatedLater(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "config", "dshd")
	p := filepath.Join(dir, "settings.json")
	live, changes, watched := startWatch(t, p)
	waitWatched(t, watched, root)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, `{"permissions":{"defaultMode":"plan"}}`)
	waitMode(t, changes, "plan")
	if got := live.Current().Permissions.DefaultMode; got != "plan" {
		t.Fatalf("Current mode = %q, want plan", got)
	}
	// Only the file's own directory stays watched, not the ancestors the
	// watch passed through.
	waitWatched(t, watched, dir)
}

// TestWatchDirectoryFirstFileLater creates the missing directory, waits
// until the watch has moved into it, and only then creates the file.
func TestWatchDirectoryFirstFileLater(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".dshd")
	p := filepath.Join(dir, "settings.json")
	_, changes, watched := startWatch(t, p)
	waitWatched(t, watched, root)

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitWatched(t, watched, dir)
	writeFile(t, p, `{"permissions":{"defaultMode":"acceptEdits"}}`)
	waitMode(t, changes, "acceptEdits")

	// Saves by rename keep working in the directory the watch moved to.
	tmp := filepath.Join(dir, ".settings.json.swp")
	writeFile(t, tmp, `{"permissions":{"defaultMode":"plan"}}`)
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	waitMode(t, changes, "plan")
}

// TestWatchDirectoryRemovedAndCreatedAgain removes the watched directory
// with the file in it (the settings fall back to the defaults), then
// creates both again: the watch falls back to the parent and comes back.
func TestWatchDirectoryRemovedAndCreatedAgain(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "config", "dshd")
	p := filepath.Join(dir, "settings.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, `{"permissions":{"defaultMode":"plan"}}`)
	live, changes, watched := startWatch(t, p)
	waitWatched(t, watched, dir)
	if got := live.Current().Permissions.DefaultMode; got != "plan" {
		t.Fatalf("start-up mode = %q, want plan", got)
	}

	if err := os.RemoveAll(filepath.Join(root, "config")); err != nil {
		t.Fatal(err)
	}
	waitMode(t, changes, "")
	waitWatched(t, watched, root)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, `{"permissions":{"defaultMode":"bypassPermissions"}}`)
	waitMode(t, changes, "bypassPermissions")
	waitWatched(t, watched, dir)
}

// TestWatchDirectoryRenamedIntoPlace prepares the directory with its file
// elsewhere and renames it into place in one step: the file existed before
// any watch could see it, so it is loaded as soon as the watch moves down.
func TestWatchDirectoryRenamedIntoPlace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "config", "dshd", "settings.json")
	staging := filepath.Join(root, "staging")
	if err := os.MkdirAll(filepath.Join(staging, "dshd"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(staging, "dshd", "settings.json"), `{"permissions":{"defaultMode":"plan"}}`)
	_, changes, watched := startWatch(t, p)
	waitWatched(t, watched, root)

	if err := os.Rename(staging, filepath.Join(root, "config")); err != nil {
		t.Fatal(err)
	}
	waitMode(t, changes, "plan")
	waitWatched(t, watched, filepath.Dir(p))
}

// startWatch makes a Live for paths and starts Watch until the test ends.
// It returns the channels OnChange sends every applied reload to and Watch
// sends the watched directories to whenever it has set them up or moved
// them.
func startWatch(t *testing.T, paths ...string) (*Live, <-chan Settings, <-chan []string) {
	t.Helper()
	live, err := NewLive(paths, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan Settings, 64)
	live.OnChange(func(s Settings) { changes <- s })
	watched := make(chan []string, 256)
	live.watched = func(dirs []string) { watched <- dirs }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = live.Watch(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-live.Watching()
	return live, changes, watched
}

// waitWatched waits until exactly dirs are watched.
func waitWatched(t *testing.T, watched <-chan []string, dirs ...string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var last []string
	for {
		select {
		case got := <-watched:
			if slices.Equal(got, dirs) {
				return
			}
			last = got
		case <-deadline:
			t.Fatalf("watched directories %q, want %q", last, dirs)
		}
	}
}

// waitMode waits for reloads until one has defaultMode want. Reloads with
// other settings on the way are allowed: the filesystem may report one
// change as several events.
func waitMode(t *testing.T, changes <-chan Settings, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-changes:
			if s.Permissions.DefaultMode == want {
				return
			}
		case <-deadline:
			t.Fatalf("no reload to defaultMode %q", want)
		}
	}
}

// TestWatchIgnoresRememberedAnswers: the daemon writes the project's
// remembered answers (.dshd/settings.local.json, its .gitignore and lock)
// by temporary file and rename into the watched directory; that is not a
// settings change and reloads nothing, while settings.json beside it still
// reloads.
func TestWatchIgnoresRememberedAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".dshd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "settings.json")
	writeFile(t, p, `{"permissions":{"defaultMode":"acceptEdits"}}`)
	_, changes, watched := startWatch(t, p)
	waitWatched(t, watched, dir)
	for _, name := range []string{".gitignore", "settings.local.json", "settings.local.json.lock"} {
		tmp := filepath.Join(dir, "."+name+".tmp-1")
		writeFile(t, tmp, `{"permissions":{"allow":["read"]}}`)
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, p, `{"permissions":{"defaultMode":"plan"}}`)
	select {
	case s := <-changes:
		if s.Permissions.DefaultMode != "plan" || len(s.Permissions.Allow) != 0 {
			t.Fatalf("a reload for the remembered answers: %+v", s.Permissions)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no reload for settings.json")
	}
}
