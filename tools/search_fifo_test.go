//go:build unix

package tools

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
)

func TestGrepFIFO(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "foo\n"})
	fifo := filepath.Join(root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no fifos here: %v", err)
	}
	// Named directly or met while walking, a FIFO is skipped, never opened
	// for a blocking read.
	for _, p := range []string{root, fifo} {
		r, err := Grep(context.Background(), p, GrepOptions{Pattern: "foo"})
		if err != nil {
			t.Fatal(err)
		}
		if p == fifo && (len(r.Files) != 0 || r.Skipped != 1) {
			t.Errorf("fifo searched: %+v", r)
		}
	}
}
