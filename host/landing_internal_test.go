package host

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes parts one after the other, so a test can make a large
// file without holding it whole.
func writeFile(t *testing.T, path string, parts func(w *bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	parts(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadTextWindow: a windowed read of a local file returns the window
// and keeps at most localLineBytes of each line, marking a cut line with
// its real length, however large the file or its lines are.
func TestReadTextWindow(t *testing.T) {
	dir := t.TempDir()
	const longLen = 50 << 20
	long := filepath.Join(dir, "long.txt")
	writeFile(t, long, func(w *bufio.Writer) {
		chunk := strings.Repeat("x", 1<<20)
		for range longLen >> 20 {
			w.WriteString(chunk)
		}
		w.WriteString("\ntail\n")
	})
	many := filepath.Join(dir, "many.txt")
	writeFile(t, many, func(w *bufio.Writer) {
		for i := 1; i <= 300_000; i++ {
			fmt.Fprintf(w, "line %d\n", i)
		}
	})
	small := filepath.Join(dir, "small.txt")
	// "é" is two bytes; the cut must not split it.
	runes := strings.Repeat("a", localLineBytes-1) + "é" + "zz"
	if err := os.WriteFile(small, []byte("one\r\ntwo\n"+runes+"\nlast"), 0o644); err != nil {
		t.Fatal(err)
	}
	cutMarker := func(n int) string { return fmt.Sprintf("… [line cut: %d bytes]", n) }

	tests := []struct {
		name        string
		path        string
		line, limit int
		want        string
	}{
		{"long line cut", long, 1, 2, strings.Repeat("x", localLineBytes) + cutMarker(longLen) + "\ntail\n"},
		{"window after a long line", long, 2, 5, "tail\n"},
		{"window of many lines", many, 250_000, 3, "line 250000\nline 250001\nline 250002\n"},
		{"window past the end", many, 300_001, 3, ""},
		{"last lines", many, 299_999, 10, "line 299999\nline 300000\n"},
		{"from a line to the end", small, 2, 0, "two\n" + strings.Repeat("a", localLineBytes-1) + cutMarker(len(runes)) + "\nlast"},
		{"line ends kept", small, 1, 1, "one\r\n"},
		{"no final newline", small, 4, 1, "last"},
		{"whole file", small, 0, 0, "one\r\ntwo\n" + runes + "\nlast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Landing{Written: tt.path, Abs: tt.path, Root: dir}.ReadText(context.Background(), tt.line, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ReadText(%d, %d) = %.200q (%d bytes), want %.200q (%d bytes)", tt.line, tt.limit, got, len(got), tt.want, len(tt.want))
			}
		})
	}
}

// TestReadTextCancelled: skipping to a far window stops when the context
// ends.
func TestReadTextCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.txt")
	writeFile(t, path, func(w *bufio.Writer) {
		for range 10_000 {
			w.WriteString("x\n")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Landing{Written: path, Abs: path, Root: filepath.Dir(path)}).ReadText(ctx, 9_000, 1); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
