package bridge_test

import (
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/bridge"
)

func TestParseFileURI(t *testing.T) {
	for _, tt := range []struct {
		uri      string
		path     string
		from, to int
		ok       bool
	}{
		{"file:///src/main.go", "/src/main.go", 0, 0, true},
		{"file:///src/main.go#L10:20", "/src/main.go", 10, 20, true},
		{"file:///src/main.go#L10-20", "/src/main.go", 10, 20, true},
		{"file:///src/main.go#L10-L20", "/src/main.go", 10, 20, true},
		{"file:///src/main.go#L20-10", "/src/main.go", 10, 20, true},
		{"file:///src/main.go#L7", "/src/main.go", 7, 0, true},
		{"file:///src/main.go#L7:7", "/src/main.go", 7, 0, true},
		{"file:///src/my%20file.go#symbol", "/src/my file.go", 0, 0, true},
		{"file://localhost/etc/hosts", "/etc/hosts", 0, 0, true},
		{"file://other-host/etc/hosts", "", 0, 0, false},
		{"https://example.com/a.go", "", 0, 0, false},
		{"zed:///agent/thread/1", "", 0, 0, false},
		{"file:///x#L99999999999999999999-3", "/x", 0, 0, true},
		{"file:///x#L0-3", "/x", 0, 0, true},
		{"file:///x#L5-0", "/x", 5, 0, true},
	} {
		path, from, to, ok := bridge.ParseFileURI(tt.uri)
		if path != filepath.FromSlash(tt.path) || from != tt.from || to != tt.to || ok != tt.ok {
			t.Errorf("ParseFileURI(%q) = %q %d %d %v, want %q %d %d %v", tt.uri, path, from, to, ok, tt.path, tt.from, tt.to, tt.ok)
		}
	}
}

func FuzzParseFileURI(f *testing.F) {
	for _, s := range []string{"file:///a/b.go#L1:2", "file:///x#L9-L3", "file://h/x", "http://x", "file:///%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		path, from, to, ok := bridge.ParseFileURI(uri)
		if !ok {
			if path != "" || from != 0 || to != 0 {
				t.Fatalf("not ok but %q %d %d", path, from, to)
			}
			return
		}
		if path == "" || from < 0 || to < 0 || (to != 0 && to <= from) || (from == 0 && to != 0) {
			t.Fatalf("ParseFileURI(%q) = %q %d %d", uri, path, from, to)
		}
	})
}
