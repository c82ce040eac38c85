//go:build !unix

package openfile

import (
	"io"
	"os"
)

// openRead opens path for reading (see open_unix.go).
func openRead(path string) (io.ReadCloser, error) { return os.Open(path) }
