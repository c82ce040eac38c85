package acp

import (
	"errors"
	"io"
)

// Stdio joins a reader and a writer (normally os.Stdin and os.Stdout) into the
// io.ReadWriteCloser that [ConnectClient] wants. Close closes both.
//
// Keep stdout for the protocol only: after taking it, point os.Stdout at os.Stderr so a stray
// print cannot corrupt the stream, and never let child processes inherit it.
func Stdio(in io.ReadCloser, out io.WriteCloser) io.ReadWriteCloser { return stdio{in, out} }

type stdio struct {
	io.ReadCloser
	out io.WriteCloser
}

func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

func (s stdio) Close() error { return errors.Join(s.ReadCloser.Close(), s.out.Close()) }
