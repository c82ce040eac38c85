package openfile

import (
	"bytes"
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
