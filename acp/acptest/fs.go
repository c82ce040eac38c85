package acptest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-tools/dshd/acp"
)

// FS serves fs/read_text_file and fs/write_text_file. Paths are absolute. A missing file is
// reported with an error matching fs.ErrNotExist, which the client answers with -32002.
type FS interface {
	ReadFile(ctx context.Context, path string) (string, error)
	WriteFile(ctx context.Context, path, content string) error
}

// DirFS serves real files under Root; paths outside Root are rejected with -32602.
type DirFS struct{ Root string }

func (d DirFS) resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: path %q is not absolute", acp.ErrInvalidParams, path)
	}
	root, err := filepath.Abs(d.Root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: path %q is outside %s", acp.ErrInvalidParams, path, root)
	}
	return filepath.Join(root, rel), nil
}

// ReadFile implements [FS].
func (d DirFS) ReadFile(_ context.Context, path string) (string, error) {
	p, err := d.resolve(path)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	return string(b), err
}

// WriteFile implements [FS]; it creates the file (and its directories) if needed.
func (d DirFS) WriteFile(_ context.Context, path, content string) error {
	p, err := d.resolve(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// MemFS is an in-memory [FS] fake keyed by absolute path.
type MemFS struct {
	mu     sync.Mutex
	files  map[string]string
	writes []string
}

// NewMemFS returns a MemFS holding a copy of files.
func NewMemFS(files map[string]string) *MemFS {
	m := &MemFS{files: map[string]string{}}
	for k, v := range files {
		m.files[k] = v
	}
	return m
}

// ReadFile implements [FS].
func (m *MemFS) ReadFile(_ context.Context, path string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.files[path]
	if !ok {
		return "", &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
	}
	return s, nil
}

// WriteFile implements [FS].
func (m *MemFS) WriteFile(_ context.Context, path, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[path] = content
	m.writes = append(m.writes, path)
	return nil
}

// File returns the content of path and whether it exists.
func (m *MemFS) File(path string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.files[path]
	return s, ok
}

// Writes returns the paths written, in order.
func (m *MemFS) Writes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.writes...)
}

// ReadTextFile implements [acp.Client].
func (c *Client) ReadTextFile(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	if c.FS == nil {
		return nil, fmt.Errorf("%w: %s", acp.ErrMethodNotFound, acp.MethodFSReadTextFile)
	}
	content, err := c.FS.ReadFile(ctx, req.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, acp.ResourceNotFound("file://" + req.Path)
	}
	if err != nil {
		return nil, err
	}
	return &acp.ReadTextFileResponse{Content: sliceLines(content, req.Line, req.Limit)}, nil
}

// WriteTextFile implements [acp.Client].
func (c *Client) WriteTextFile(ctx context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	if c.FS == nil {
		return nil, fmt.Errorf("%w: %s", acp.ErrMethodNotFound, acp.MethodFSWriteTextFile)
	}
	if err := c.FS.WriteFile(ctx, req.Path, req.Content); err != nil {
		return nil, err
	}
	return &acp.WriteTextFileResponse{}, nil
}

// sliceLines returns limit lines starting at the 1-based line (nil: from the start / to the end).
func sliceLines(content string, line, limit *uint32) string {
	if line == nil && limit == nil {
		return content
	}
	lines := strings.SplitAfter(content, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = int(*line) - 1
	}
	if start >= len(lines) {
		return ""
	}
	end := len(lines)
	if limit != nil && start+int(*limit) < end {
		end = start + int(*limit)
	}
	return strings.Join(lines[start:end], "")
}
