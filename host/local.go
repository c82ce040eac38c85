package host

import "context"

// LocalFiles is the local-disk [Files]: the landing's own methods, beneath
// its root. Reading streams the file, so a line/limit window costs memory
// for that window only ([Landing.ReadText]); writing goes through a
// temporary file and a rename, so a reader never sees half a file and a
// failed write leaves the old content ([Landing.WriteText]). The bridge
// uses it when the editor offers no file system.
type LocalFiles struct{}

// ReadTextFile returns the text of l, or of limit lines from the 1-based
// line when those are positive.
func (LocalFiles) ReadTextFile(ctx context.Context, l Landing, line, limit int) (string, error) {
	return l.ReadText(ctx, line, limit)
}

// WriteTextFile replaces l with content atomically, creating parent
// directories and keeping the mode of a file it replaces.
func (LocalFiles) WriteTextFile(_ context.Context, l Landing, content string) error {
	return l.WriteText(content)
}
