package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools"
)

// builtin returns the named first-party tool with its default options.
func builtin(t *testing.T, name string) *registry.Definition {
	t.Helper()
	for _, d := range tools.Builtin(tools.Options{}) {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no built-in tool %q", name)
	return nil
}

// runTool runs one call of a tool added to a fresh session of a client
// with caps, and returns the call's result.
func runTool(t *testing.T, client *acptest.Client, caps acp.ClientCapabilities, cwd string, def *registry.Definition, args string) registry.Result {
	t.Helper()
	var res registry.Result
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		res = turn.Execute(ctx, bridge.ToolCall{ID: "c1", Name: def.Name, Arguments: json.RawMessage(args)})
		return acp.StopEndTurn, nil
	})
	agent := newTestAgent(t, loop, t.TempDir())
	conn := connect(t, agent, client, caps)
	sid := newSession(t, conn, cwd)
	if err := agent.Registry().AddScoped(sid, def); err != nil {
		t.Fatal(err)
	}
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	return res
}

func resultText(r registry.Result) string {
	var sb strings.Builder
	for _, c := range r.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}

// TestReadToolLocalWindow: without fs/read_text_file the read tool shows
// the same window through the bridge's streamed local read, a line too long
// to show cut with a marker.
func TestReadToolLocalWindow(t *testing.T) {
	cwd := t.TempDir()
	f, err := os.Create(filepath.Join(cwd, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	chunk := strings.Repeat("y", 1<<20)
	for range 50 {
		w.WriteString(chunk)
	}
	for i := 2; i <= 100_000; i++ {
		fmt.Fprintf(w, "\nline %d", i)
	}
	w.WriteString("\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	read := builtin(t, "read")

	tests := []struct {
		name, args string
		want       []string
		absent     []string
	}{
		{"the long line", `{"path":"big.txt","limit":2}`,
			[]string{"     1\t" + strings.Repeat("y", 2000) + "… [line cut: ", "     2\tline 2\n", "Call read with offset=3"},
			[]string{strings.Repeat("y", 2001)}},
		{"a window far in", `{"path":"big.txt","offset":99998,"limit":5}`,
			[]string{" 99998\tline 99998\n 99999\tline 99999\n100000\tline 100000\n"},
			[]string{"99997", "the file continues"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runTool(t, &acptest.Client{}, acp.ClientCapabilities{}, cwd, read, tt.args)
			text := resultText(res)
			if res.IsError {
				t.Fatalf("read failed: %s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %.80q:\n%.300s", w, text)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("result has %.80q", a)
				}
			}
		})
	}
}

// fileOnlyFS is an editor that does what ACP obliges it to for
// fs/write_text_file and no more: it creates the file, not the directories
// above it.
type fileOnlyFS struct{}

func (fileOnlyFS) ReadFile(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func (fileOnlyFS) WriteFile(_ context.Context, path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}

// TestWriteCreatesParentDirectories: the write tool creates missing parent
// directories whether the file is written on disk or through the editor.
func TestWriteCreatesParentDirectories(t *testing.T) {
	for _, editor := range []bool{false, true} {
		t.Run(fmt.Sprintf("editor=%v", editor), func(t *testing.T) {
			cwd := t.TempDir()
			client := &acptest.Client{}
			caps := acp.ClientCapabilities{}
			if editor {
				client.FS = fileOnlyFS{}
				caps.FS = &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
			}
			res := runTool(t, client, caps, cwd, builtin(t, "write"), `{"path":"new/dir/file.txt","content":"hello\n"}`)
			if res.IsError {
				t.Fatalf("write failed: %s", resultText(res))
			}
			b, err := os.ReadFile(filepath.Join(cwd, "new", "dir", "file.txt"))
			if err != nil || string(b) != "hello\n" {
				t.Errorf("file = %q, %v", b, err)
			}
			var wrote bool
			for _, e := range client.Recorder.Entries() {
				wrote = wrote || strings.Contains(string(e.Msg), `"method":"fs/write_text_file"`)
			}
			if wrote != editor {
				t.Errorf("fs/write_text_file sent: %v, want %v", wrote, editor)
			}
		})
	}
}

// TestWriteOutsideRootsCreatesNothing: the directories are created only
// after the pipeline let the write through; a write outside the session's
// roots that the user refuses leaves the disk alone.
func TestWriteOutsideRootsCreatesNothing(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	client := &acptest.Client{FS: fileOnlyFS{}, Permission: acptest.RejectOnce}
	caps := acp.ClientCapabilities{FS: &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
	target := filepath.Join(outside, "new", "file.txt")
	args, _ := json.Marshal(map[string]string{"path": target, "content": "x"})
	res := runTool(t, client, caps, cwd, builtin(t, "write"), string(args))
	if !res.IsError {
		t.Fatalf("the refused write succeeded: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a directory was created outside the roots: %v", err)
	}
}

// TestLocalEditReplacesTheFile: without fs/write_text_file an edit lands
// through a temporary file renamed over the target (host.LocalFiles), so
// a reader never sees half a file: a hard link to the old file keeps the
// old content, and no temporary file is left.
func TestLocalEditReplacesTheFile(t *testing.T) {
	cwd := t.TempDir()
	target := filepath.Join(cwd, "main.go")
	if err := os.WriteFile(target, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(t.TempDir(), "old.go")
	if err := os.Link(target, old); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	client := &acptest.Client{Permission: acptest.AllowOnce}
	res := runTool(t, client, acp.ClientCapabilities{}, cwd, builtin(t, "write"), `{"path":"main.go","content":"package lib\n"}`)
	if res.IsError {
		t.Fatalf("write failed: %s", resultText(res))
	}
	if b, _ := os.ReadFile(target); string(b) != "package lib\n" {
		t.Errorf("main.go = %q", b)
	}
	if b, _ := os.ReadFile(old); string(b) != "package main\n" {
		t.Errorf("the old file was written in place: %q", b)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 1 {
		t.Errorf("files left beside main.go: %v", entries)
	}
}
