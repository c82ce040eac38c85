//go:build unix

package openfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO is reported, not opened: opening it for reading would block until
// a writer came.
func TestReadRegularDoesNotOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, b, err := ReadRegular(fifo, 1<<20)
	if err != nil || b != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("ReadRegular(fifo) = %v, %q, %v; want its FIFO mode, no content, no error", fi.Mode(), b, err)
	}
}
