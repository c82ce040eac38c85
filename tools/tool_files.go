package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func isAbs(p string) bool { return filepath.IsAbs(p) }

// ReadArgs are the arguments of the read tool.
type ReadArgs struct {
	Path   string `json:"path" desc:"The file to read: absolute, or relative to the session's working directory." min:"1"`
	Offset *int   `json:"offset,omitempty" desc:"The 1-based line to start at. Use it with limit to page through a long file." min:"1"`
	Limit  *int   `json:"limit,omitempty" desc:"How many lines to return at most (default 2000)." min:"1"`
}

const readDoc = `Read a text file. The output shows each line prefixed by its 1-based line number and a tab; the prefix is not part of the file, so never copy it into edit's old text.
By default the first 2000 lines are returned; for longer files the output ends with a note giving the offset to continue from. Very long lines are cut. Binary files are refused.
Read a file before editing it. Use glob to find files by name and grep to search contents rather than reading many files.`

func (t *toolset) readTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[ReadArgs]{
		Name: "read", Title: "Read file", Description: readDoc, Kind: presentation.KindRead,
		PresentCall: func(call registry.Call, a ReadArgs) presentation.CallView {
			title := "Read " + a.Path
			if a.Offset != nil || a.Limit != nil {
				first := intOr(a.Offset, 1)
				if a.Limit != nil {
					title += fmt.Sprintf(" (lines %d-%d)", first, first+*a.Limit-1)
				} else {
					title += fmt.Sprintf(" (from line %d)", first)
				}
			}
			return presentation.CallView{Title: title, Kind: presentation.KindRead, Locations: location(call, a.Path, a.Offset)}
		},
		PresentResult: presentRead,
		Subjects: func(call registry.Call, a ReadArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path}}
		},
	}, t.read)
}

// presentRead shows a read for a person: the file's text in a code block
// of its language, as the model saw it but without the line numbers
// (clients trim the numbered form into misaligned columns), followed by
// the note saying where the file continues. Failures show their message.
func presentRead(_ registry.Call, a ReadArgs, r registry.Result) *presentation.ResultView {
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != presentation.ContentText {
		return &presentation.ResultView{Card: &presentation.GenericCard{Content: r.Content}}
	}
	text, note, ok := UnnumberLines(r.Content[0].Text)
	if !ok {
		return &presentation.ResultView{Card: &presentation.GenericCard{Content: r.Content}}
	}
	content := []presentation.Content{presentation.Text(presentation.CodeBlock(presentation.LanguageOf(a.Path), text))}
	if note != "" {
		content = append(content, presentation.Text(note))
	}
	return &presentation.ResultView{Card: &presentation.GenericCard{Content: content}}
}

func (t *toolset) read(ctx context.Context, call registry.Call, a ReadArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	l, err := h.Land(a.Path)
	if err != nil {
		return toolError(fmt.Sprintf("cannot read %s: %v", a.Path, err))
	}
	if r, bad := checkTextFile(l, a.Path); bad {
		return r, nil
	}
	first, limit := intOr(a.Offset, 1), intOr(a.Limit, t.opts.ReadLines)
	// One line more than asked tells whether the file goes on.
	text, err := h.Files().ReadTextFile(ctx, l, first, limit+1)
	if err != nil {
		return toolError(fmt.Sprintf("cannot read %s: %v", a.Path, err))
	}
	more := false
	if n := nthLineEnd(text, limit); n >= 0 && n < len(text) {
		text, more = text[:n], true
	}
	out, n, cut := NumberLines(text, first, t.opts.MaxLineBytes, t.opts.ReadMaxBytes)
	switch {
	case n == 0 && first > 1:
		return toolError(fmt.Sprintf("%s has fewer than %d lines", a.Path, first))
	case n == 0:
		return registry.TextResult("(the file is empty)"), nil
	}
	if more || cut {
		out += fmt.Sprintf("\n[Showing lines %d-%d; the file continues. Call read with offset=%d to read further.]\n", first, first+n-1, first+n)
	}
	return registry.TextResult(out), nil
}

// nthLineEnd returns the byte offset just past the n-th line of text, or
// -1 when text has n lines or fewer.
func nthLineEnd(text string, n int) int {
	off := 0
	for i := 0; i < n; i++ {
		j := strings.IndexByte(text[off:], '\n')
		if j < 0 {
			return -1
		}
		off += j + 1
	}
	return off
}

// checkTextFile refuses what read and edit cannot handle, with a message
// the model can act on. Existence is decided from disk: an editor may
// answer a missing file with empty text.
func checkTextFile(l host.Landing, shown string) (registry.Result, bool) {
	fi, head, err := l.Head(sniffLen)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return registry.ErrorResult(registry.CodeToolError, fmt.Sprintf("%s does not exist. Check the path; glob finds files by name.", shown)), true
	case err != nil:
		return registry.ErrorResult(registry.CodeToolError, fmt.Sprintf("cannot read %s: %v", shown, err)), true
	case fi.IsDir():
		return registry.ErrorResult(registry.CodeToolError, fmt.Sprintf("%s is a directory, not a file; use glob to list its files.", shown)), true
	case !fi.Mode().IsRegular():
		return registry.ErrorResult(registry.CodeToolError, fmt.Sprintf("%s is not a regular file.", shown)), true
	}
	if isBinary(head) {
		return registry.ErrorResult(registry.CodeToolError, fmt.Sprintf("%s is a binary file (%d bytes); only text files can be read. Use bash (for example file, xxd or unzip -l) to inspect it.", shown, fi.Size())), true
	}
	return registry.Result{}, false
}

// WriteArgs are the arguments of the write tool.
type WriteArgs struct {
	Path    string `json:"path" desc:"The file to create or overwrite: absolute, or relative to the session's working directory. Missing parent directories are created." min:"1"`
	Content string `json:"content" desc:"The complete new content of the file."`
}

const writeDoc = `Create a file, or replace the whole content of an existing one. Parent directories are created.
Prefer edit for changing part of an existing file: it is shorter and cannot lose text you did not mean to touch. Read an existing file before overwriting it.`

func (t *toolset) writeTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[WriteArgs]{
		Name: "write", Title: "Write file", Description: writeDoc, Kind: presentation.KindEdit,
		PresentCall: func(call registry.Call, a WriteArgs) presentation.CallView {
			return presentation.CallView{Title: "Write " + a.Path, Kind: presentation.KindEdit, Locations: location(call, a.Path, nil)}
		},
		PresentResult: attachedView[WriteArgs],
		Subjects: func(call registry.Call, a WriteArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: true}}
		},
		Preview: previewWrite,
	}, t.write)
}

func (t *toolset) write(ctx context.Context, call registry.Call, a WriteArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	l, err := h.Land(a.Path)
	if err != nil {
		return toolError(fmt.Sprintf("cannot write %s: %v", a.Path, err))
	}
	abs := l.Abs
	before, failure := currentText(ctx, h, l, a.Path)
	if failure != "" {
		return toolError(failure)
	}
	after := keepLineEnding(before, a.Content)
	if err := h.Files().WriteTextFile(ctx, l, after); err != nil {
		return toolError(fmt.Sprintf("cannot write %s: %v", a.Path, err))
	}
	verb := writeVerb(before)
	r := registry.TextResult(fmt.Sprintf("%s %s (%d lines, %d bytes).", verb, a.Path, countLines(after), len(after)))
	r.View = &presentation.ResultView{Card: presentation.Hunks(abs, before, &after).Card(verb + " " + abs)}
	return r, nil
}

// previewWrite is the diff write would make, computed without writing.
func previewWrite(ctx context.Context, call registry.Call, a WriteArgs) (*presentation.ResultView, error) {
	h := call.Host()
	if h == nil {
		return nil, errors.New("the call has no host")
	}
	l, err := h.Land(a.Path)
	if err != nil {
		return nil, err
	}
	abs := l.Abs
	before, failure := currentText(ctx, h, l, a.Path)
	if failure != "" {
		return nil, errors.New(failure)
	}
	after := keepLineEnding(before, a.Content)
	return &presentation.ResultView{Card: presentation.Hunks(abs, before, &after).Card("Write " + abs)}, nil
}

// keepLineEnding is what write puts in place of before: content, with the
// line breaks of the file it overwrites when that file is CRLF.
func keepLineEnding(before *string, content string) string {
	if before == nil || lineEnding(*before) != crlf {
		return content
	}
	return withLineEnding(content, crlf)
}

// currentText is what write would replace: nil for a file that does not
// exist (decided from the disk: an editor may answer a missing file with
// empty text), otherwise its text through the host, since the editor's
// buffer is the truth the user sees and the diff is against it. A
// non-empty failure says why the file cannot be written.
func currentText(ctx context.Context, h host.Host, l host.Landing, shown string) (before *string, failure string) {
	// Head, not Stat: a small file is then read once, Head's reading
	// serving the local ReadTextFile below.
	fi, _, err := l.Head(sniffLen)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Sprintf("%s is a directory", shown)
	case err == nil:
		old, rerr := h.Files().ReadTextFile(ctx, l, 0, 0)
		if rerr != nil {
			return nil, fmt.Sprintf("cannot read the current %s: %v", shown, rerr)
		}
		return &old, ""
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("cannot write %s: %v", shown, err)
	}
	return nil, ""
}

func writeVerb(before *string) string {
	if before == nil {
		return "Created"
	}
	return "Overwrote"
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// EditArgs are the arguments of the edit tool.
type EditArgs struct {
	Path       string  `json:"path" desc:"The file to change: absolute, or relative to the session's working directory." min:"1"`
	Old        *string `json:"old,omitempty" desc:"For a single edit: the exact text to replace, including whitespace and indentation, without read's line-number prefixes. It must occur exactly once unless replaceAll is true."`
	New        *string `json:"new,omitempty" desc:"For a single edit: the replacement text."`
	ReplaceAll *bool   `json:"replaceAll,omitempty" desc:"For a single edit: replace every occurrence of old." default:"false"`
	Edits      []Edit  `json:"edits,omitempty" desc:"Several edits to the same file, applied in order (each sees the result of the previous ones) and all or nothing. Use instead of old/new." min:"1"`
}

const editDoc = `Replace exact text in an existing file. Give either old and new (one edit) or edits (several edits to the same file, applied in order, all or nothing).
old must match the file exactly, including indentation and line breaks, and must occur exactly once unless replaceAll is true; include a few surrounding lines to make it unique. Copy it from read's output without the line-number prefix.
If any edit fails, the file is left unchanged and the error says why. To create a file or replace all of it, use write.`

func (t *toolset) editTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[EditArgs]{
		Name: "edit", Title: "Edit file", Description: editDoc, Kind: presentation.KindEdit,
		PresentCall: func(call registry.Call, a EditArgs) presentation.CallView {
			return presentation.CallView{Title: "Edit " + a.Path, Kind: presentation.KindEdit, Locations: location(call, a.Path, nil)}
		},
		PresentResult: attachedView[EditArgs],
		Subjects: func(call registry.Call, a EditArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: true}}
		},
		Preview: previewEdit,
	}, t.edit)
}

func (a EditArgs) edits() ([]Edit, error) {
	single := a.Old != nil || a.New != nil || a.ReplaceAll != nil
	switch {
	case single && len(a.Edits) > 0:
		return nil, errors.New("give either old/new or edits, not both")
	case len(a.Edits) > 0:
		return a.Edits, nil
	case a.Old == nil || a.New == nil:
		return nil, errors.New("give old and new (or edits)")
	}
	return []Edit{{Old: *a.Old, New: *a.New, ReplaceAll: a.ReplaceAll}}, nil
}

func (t *toolset) edit(ctx context.Context, call registry.Call, a EditArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	p, failure := planEdit(ctx, h, a)
	if failure != nil {
		return *failure, nil
	}
	if err := h.Files().WriteTextFile(ctx, p.landing, p.after); err != nil {
		return toolError(fmt.Sprintf("cannot write %s: %v", a.Path, err))
	}
	d := p.hunks()
	msg := fmt.Sprintf("Edited %s: %d replacement%s", a.Path, p.replacements, plural(p.replacements))
	if lines := d.Locations(); len(lines) > 0 && lines[0].Line != nil {
		msg += fmt.Sprintf(", first change at line %d", *lines[0].Line)
	}
	r := registry.TextResult(msg + ".")
	r.View = &presentation.ResultView{Card: d.Card("Edited " + p.abs)}
	return r, nil
}

// previewEdit is the diff edit would make, computed in memory without
// writing. An edit that would fail (old text not found) has no preview.
func previewEdit(ctx context.Context, call registry.Call, a EditArgs) (*presentation.ResultView, error) {
	h := call.Host()
	if h == nil {
		return nil, errors.New("the call has no host")
	}
	p, failure := planEdit(ctx, h, a)
	if failure != nil {
		return nil, errors.New(failure.Error.Message)
	}
	return &presentation.ResultView{Card: p.hunks().Card("Edit " + p.abs)}, nil
}

// editPlan is what an edit would write.
type editPlan struct {
	landing            host.Landing
	abs, before, after string
	replacements       int
}

func (p editPlan) hunks() presentation.DiffResult {
	return presentation.Hunks(p.abs, &p.before, &p.after)
}

// planEdit reads the file through the host (an editor buffer counts) and
// applies the edits in memory. A non-nil failure is the result the call
// ends with; nothing has been written either way.
func planEdit(ctx context.Context, h host.Host, a EditArgs) (editPlan, *registry.Result) {
	fail := func(code, msg string) (editPlan, *registry.Result) {
		r := registry.ErrorResult(code, msg)
		return editPlan{}, &r
	}
	edits, err := a.edits()
	if err != nil {
		return fail(registry.CodeInvalidArgs, err.Error())
	}
	l, err := h.Land(a.Path)
	if err != nil {
		return fail(registry.CodeToolError, fmt.Sprintf("cannot edit %s: %v", a.Path, err))
	}
	p := editPlan{landing: l, abs: l.Abs}
	if r, bad := checkTextFile(l, a.Path); bad {
		return editPlan{}, &r
	}
	if p.before, err = h.Files().ReadTextFile(ctx, l, 0, 0); err != nil {
		return fail(registry.CodeToolError, fmt.Sprintf("cannot read %s: %v", a.Path, err))
	}
	if p.after, p.replacements, err = ApplyEdits(p.before, edits); err != nil {
		return fail(registry.CodeToolError, fmt.Sprintf("%s: no change made: %v", a.Path, err))
	}
	return p, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
