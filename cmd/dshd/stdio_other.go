//go:build !unix

package main

import "os"

// editorStdio returns stdin and stdout as they are: the blocking read that
// stdio_unix.go avoids is a Unix matter.
func editorStdio() (in, out *os.File, restore func()) {
	return os.Stdin, os.Stdout, func() {}
}
