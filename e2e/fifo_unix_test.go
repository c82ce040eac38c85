//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// readyFIFO makes a FIFO named name in dir: a command the daemon runs says
// it has got somewhere by writing to it (echo > name), and waitFIFO reads
// that, so no test polls for a process to appear.
func readyFIFO(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFIFO reads the FIFO at path until its writer closes it and returns
// what came. d bounds a failure: the command never got there.
func waitFIFO(t testing.TB, path string, d time.Duration) string {
	t.Helper()
	got := make(chan []byte, 1)
	go func() { b, _ := os.ReadFile(path); got <- b }()
	select {
	case b := <-got:
		return string(b)
	case <-time.After(d):
		// A writer's open lets the blocked reader's open return.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("nothing came through %s in %v", filepath.Base(path), d)
		return ""
	}
}
