package openfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		limit   int64
		want    []byte // nil: not read
		wantErr bool
	}{
		{"small", small, 1 << 20, []byte("same\n"), false},
		{"at the limit", small, 5, []byte("same\n"), false},
		{"over the limit", small, 4, nil, false},
		{"empty", empty, 10, []byte{}, false},
		{"directory", dir, 1 << 20, nil, false},
		{"missing", filepath.Join(dir, "missing"), 10, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, b, err := ReadRegular(tc.path, tc.limit)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && fi == nil {
				t.Fatal("no file information")
			}
			if (b == nil) != (tc.want == nil) || !bytes.Equal(b, tc.want) {
				t.Fatalf("content %q (nil %v), want %q (nil %v)", b, b == nil, tc.want, tc.want == nil)
			}
		})
	}
}

// countingReader counts the reads it serves from b.
type countingReader struct {
	b     []byte
	reads int
}

func (r *countingReader) Read(p []byte) (int, error) {
	r.reads++
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// shortReader serves at most max bytes a read, as a read(2) interrupted
// or a file system with small reads would.
type shortReader struct {
	countingReader
	max int
}

func (r *shortReader) Read(p []byte) (int, error) {
	return r.countingReader.Read(p[:min(len(p), r.max)])
}

func TestFill(t *testing.T) {
	for _, tc := range []struct {
		name      string
		content   string
		size      int64 // by the stat
		buf       int
		max       int // bytes a read, 0 for all
		want      string
		wantReads int
	}{
		{"whole file at its stat's size", "same\n", 5, 6, 0, "same\n", 1},
		{"empty file", "", 0, 1, 0, "", 1},
		{"grew since the stat", "same\nmore\n", 5, 11, 0, "same\nmore\n", 2},
		{"shrank since the stat", "sa", 5, 6, 0, "sa", 2},
		{"buffer smaller than the file", "same\n", 5, 3, 0, "sam", 1},
		{"short reads are read on", "same\n", 5, 6, 2, "same\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &shortReader{countingReader: countingReader{b: []byte(tc.content)}, max: tc.max}
			if tc.max == 0 {
				r.max = len(tc.content) + 1
			}
			buf := make([]byte, tc.buf)
			n, err := Fill(r, buf, tc.size)
			if err != nil || string(buf[:n]) != tc.want {
				t.Fatalf("Fill = %q, %v; want %q", buf[:n], err, tc.want)
			}
			if r.reads != tc.wantReads {
				t.Errorf("%d reads, want %d", r.reads, tc.wantReads)
			}
		})
	}
}
