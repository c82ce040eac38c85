//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessionlog_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// TestOneWriter: while a Log holds a session (created or opened), a second
// Open fails with ErrLocked and changes nothing, not even a torn tail that
// may be the holder's record in flight; once the holder closes, it opens.
func TestOneWriter(t *testing.T) {
	dir := t.TempDir()
	first, err := sessionlog.Create(dir, sessionlog.Header{SessionID: "s1", Cwd: "/w", Created: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Append(sessionlog.KindPrompt, []string{"hi"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s1.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"t":"update","ts":2,"d":{"half`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, _ := os.ReadFile(path)

	if _, err := sessionlog.Open(dir, "s1"); !errors.Is(err, sessionlog.ErrLocked) {
		t.Fatalf("second Open while held: %v, want ErrLocked", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the refused Open changed the log:\n%s\nwas\n%s", after, before)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := sessionlog.Open(dir, "s1")
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	defer second.Close()
	if _, err := sessionlog.Open(dir, "s1"); !errors.Is(err, sessionlog.ErrLocked) {
		t.Errorf("Open while reopened: %v, want ErrLocked", err)
	}
	// Listing reads without the lock.
	if page, err := sessionlog.List(dir, "", "", 0); err != nil || len(page.Sessions) != 1 {
		t.Errorf("List while held: %+v %v", page, err)
	}
}
