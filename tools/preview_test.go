package tools

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
)

// bufferFiles stands in for an editor's fs: it answers from unsaved
// buffers where it has one, answers a missing file with empty text (as
// some editors do), and counts writes.
type bufferFiles struct {
	mu      sync.Mutex
	buffers map[string]string
	writes  int
}

func (f *bufferFiles) ReadTextFile(ctx context.Context, l host.Landing, line, limit int) (string, error) {
	path := l.Abs
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := f.buffers[path]; ok {
		return b, nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	return string(b), err
}

func (f *bufferFiles) WriteTextFile(ctx context.Context, l host.Landing, content string) error {
	f.mu.Lock()
	f.writes++
	f.mu.Unlock()
	return host.LocalFiles{}.WriteTextFile(ctx, l, content)
}

func previewDiffs(t *testing.T, hs *harness, name string, args map[string]any) ([]presentation.FileDiff, error) {
	t.Helper()
	v, err := hs.defs[name].Preview(hs.ctx, hs.call(name, args))
	if err != nil {
		if v != nil {
			t.Errorf("%s preview returned a view and an error", name)
		}
		return nil, err
	}
	card, ok := v.Card.(*presentation.DiffCard)
	if !ok {
		t.Fatalf("%s preview card %T, want a diff card", name, v.Card)
	}
	return card.Diffs, nil
}

func TestEditPreview(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.go")
	orig := "package f\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n"
	must(t, os.WriteFile(path, []byte(orig), 0o644))
	hs := newHarness(t, dir, Options{})
	files := &bufferFiles{buffers: map[string]string{}}
	hs.h.files = files

	tests := []struct {
		name    string
		args    map[string]any
		wantErr string
	}{
		{"single", map[string]any{"path": "f.go", "old": "func B() int { return 1 }", "new": "func B() int { return 2 }"}, ""},
		{"several", map[string]any{"path": "f.go", "edits": []map[string]any{
			{"old": "func A", "new": "func AA"}, {"old": "return 1", "new": "return 7", "replaceAll": true}}}, ""},
		{"old text not found", map[string]any{"path": "f.go", "old": "func Z", "new": "x"}, "was not found"},
		{"not unique", map[string]any{"path": "f.go", "old": "return 1", "new": "x"}, "occurs 2 times"},
		{"missing file", map[string]any{"path": "nope.go", "old": "a", "new": "b"}, "does not exist"},
		{"both forms", map[string]any{"path": "f.go", "old": "a", "new": "b", "edits": []map[string]any{{"old": "a", "new": "b"}}}, "either old/new or edits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := previewDiffs(t, hs, "edit", tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("preview error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != orig || files.writes != 0 {
				t.Fatalf("the preview wrote: %q, %d writes", b, files.writes)
			}
			// The preview is the diff the edit then makes.
			r := hs.run("edit", tt.args)
			must(t, os.WriteFile(path, []byte(orig), 0o644))
			files.writes = 0
			if r.IsError {
				t.Fatalf("edit failed: %s", text(r))
			}
			if got := r.View.Card.(*presentation.DiffCard).Diffs; !reflect.DeepEqual(diffs, got) {
				t.Errorf("preview diffs\n%+v\nresult diffs\n%+v", diffs, got)
			}
		})
	}

	// The diff is against the editor's buffer, not the disk.
	files.buffers[path] = strings.Replace(orig, "func A", "func Unsaved", 1)
	diffs, err := previewDiffs(t, hs, "edit", map[string]any{"path": "f.go", "old": "func Unsaved", "new": "func Saved"})
	if err != nil || len(diffs) != 1 || diffs[0].OldText == nil || !strings.Contains(*diffs[0].OldText, "func Unsaved") {
		t.Errorf("buffer preview %+v, %v", diffs, err)
	}
}

func TestWritePreview(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.txt")
	must(t, os.WriteFile(existing, []byte("one\ntwo\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	hs := newHarness(t, dir, Options{})
	files := &bufferFiles{buffers: map[string]string{}}
	hs.h.files = files

	// A new file: oldText null although the editor answers "" for it.
	diffs, err := previewDiffs(t, hs, "write", map[string]any{"path": "new/f.txt", "content": "x\n"})
	if err != nil || len(diffs) != 1 || diffs[0].OldText != nil || diffs[0].NewText != "x\n" || diffs[0].Path != filepath.Join(dir, "new/f.txt") {
		t.Fatalf("new-file preview %+v, %v", diffs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) || files.writes != 0 {
		t.Fatalf("the preview created something: %v, %d writes", err, files.writes)
	}

	args := map[string]any{"path": "old.txt", "content": "one\n2\n"}
	diffs, err = previewDiffs(t, hs, "write", args)
	if err != nil || len(diffs) != 1 || diffs[0].OldText == nil || *diffs[0].OldText != "one\ntwo\n" {
		t.Fatalf("overwrite preview %+v, %v", diffs, err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "one\ntwo\n" {
		t.Fatalf("the preview wrote %q", b)
	}
	r := hs.run("write", args)
	if got := r.View.Card.(*presentation.DiffCard).Diffs; !reflect.DeepEqual(diffs, got) {
		t.Errorf("preview diffs %+v, result diffs %+v", diffs, got)
	}

	if _, err := previewDiffs(t, hs, "write", map[string]any{"path": "sub", "content": "x"}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory preview error %v", err)
	}
	hostless := hs.call("write", args)
	hostless.host = nil
	if v, err := hs.defs["write"].Preview(context.Background(), hostless); v != nil || err == nil {
		t.Errorf("preview without a host: %+v, %v", v, err)
	}
}
