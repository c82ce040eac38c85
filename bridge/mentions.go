package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// Limits of what one mention brings into the prompt.
const (
	// MaxMentionBytes caps the text of a mentioned file or selection.
	MaxMentionBytes = 256 << 10
	// MaxMentionEntries caps the entries of a mentioned directory.
	MaxMentionEntries = 500
	// MaxMentionImageBytes caps a mentioned image file.
	MaxMentionImageBytes = 10 << 20
)

// Mention is what a resource_link of the prompt (an editor's @-mention of a
// file, a directory, a selection or a symbol) refers to, read for the
// model. Exactly one of Text, Entries, Image or Err is meaningful.
type Mention struct {
	// URI is the link as the editor sent it.
	URI string
	// Path is the local file the link names (empty for other URIs); From
	// and To are the selected lines (1-based, inclusive; 0 for the whole
	// file; To is 0 for a single line From).
	Path     string
	From, To int
	// Text is the file's text, or the selected lines.
	Text string
	// Dir says Path is a directory; Entries is its listing (directories
	// end with "/"), More the entries left out.
	Dir     bool
	Entries []string
	More    int
	// Image is an image file's bytes, of type MIMEType.
	Image    []byte
	MIMEType string
	// Truncated says Text was cut to MaxMentionBytes (Size is the full
	// number of bytes read).
	Truncated bool
	Size      int
	// Err says why the link could not be read; the loop tells the model.
	Err error
}

// selectionFragment matches the line range of a selection URI fragment:
// L10, L10:20 (Zed's form: lines 10 to 20), L10-20 or L10-L20.
var selectionFragment = regexp.MustCompile(`^L(\d+)(?:[:-]L?(\d+))?$`)

// ParseFileURI returns the local path and the selected lines of a file://
// URI; ok is false for other URIs.
func ParseFileURI(uri string) (path string, from, to int, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", 0, 0, false
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", 0, 0, false
	}
	if m := selectionFragment.FindStringSubmatch(u.Fragment); m != nil {
		var ferr, terr error
		from, ferr = strconv.Atoi(m[1])
		if m[2] != "" {
			to, terr = strconv.Atoi(m[2])
		}
		if ferr != nil || terr != nil || from == 0 {
			from, to = 0, 0 // not a usable line range: the whole file
		}
		if to > 0 && to < from {
			from, to = to, from
		}
		if to == from {
			to = 0
		}
	}
	return filepath.FromSlash(u.Path), from, to, true
}

// ReadMention reads what a resource_link of the prompt names, the way the
// read tool would: through the editor when it offers fs/read_text_file
// (so unsaved buffers count), from the disk otherwise, and only where the
// read tool could read without asking: inside the session's roots (or in
// bypassPermissions mode) and not denied or asked about by a permission
// rule. A directory becomes a listing; an image file its bytes. Anything
// that cannot be read comes back with Err saying why, for the model.
func (t *Turn) ReadMention(ctx context.Context, uri string) Mention {
	return t.sess.readMention(ctx, uri)
}

func (s *session) readMention(ctx context.Context, uri string) Mention {
	m := Mention{URI: uri}
	path, from, to, ok := ParseFileURI(uri)
	if !ok {
		m.Err = errors.New("it is not a local file:// link, so dshd cannot read it")
		return m
	}
	m.Path, m.From, m.To = path, from, to
	l, err := s.mentionAllowed(path)
	if err != nil {
		m.Err = err
		return m
	}
	abs := l.Abs
	fi, err := l.Stat()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m.Err = errors.New("it does not exist")
		return m
	case err != nil:
		m.Err = err
		return m
	case fi.IsDir():
		m.Dir = true
		m.Entries, m.More, m.Err = listDir(abs)
		return m
	}
	if mime := imageType(abs); mime != "" && from == 0 {
		if fi.Size() > MaxMentionImageBytes {
			m.Err = fmt.Errorf("the image is %d bytes, more than the %d dshd sends", fi.Size(), MaxMentionImageBytes)
			return m
		}
		m.Image, m.Err = readLanding(l)
		m.MIMEType = mime
		return m
	}
	limit := 0
	if from > 0 {
		limit = 1
		if to > from {
			limit = to - from + 1
		}
	}
	files := &sessionFiles{s: s}
	text, err := files.ReadTextFile(ctx, l, from, limit)
	if err != nil {
		m.Err = err
		return m
	}
	if strings.IndexByte(text, 0) >= 0 {
		m.Err = errors.New("it is a binary file")
		return m
	}
	m.Size = len(text)
	if len(text) > MaxMentionBytes {
		text = cutAtLine(text, MaxMentionBytes)
		m.Truncated = true
	}
	m.Text = text
	return m
}

// mentionAllowed decides, as for a read call, whether the user's mention
// may be read without asking, and returns where the path lands: the
// landing the mention is then read from, beneath its root.
func (s *session) mentionAllowed(path string) (host.Landing, error) {
	subjects := []registry.Subject{{Kind: registry.SubjectPath, Value: path}}
	lp, _ := s.land(subjects).Lookup(path)
	if lp.Err != nil || lp.Abs == "" {
		return host.Landing{}, fmt.Errorf("its path cannot be resolved: %v", lp.Err)
	}
	mode := s.currentMode()
	if lp.Root == "" && mode.OutsideRoots() != policy.Allow {
		return host.Landing{}, fmt.Errorf("it is outside the session's workspace (%s); read it with the read tool, which asks the user first", strings.Join(s.roots, ", "))
	}
	l := host.NewLanding(path, lp.Abs, lp.Root)
	rs := s.agent.Rules()
	rs.Cwd = s.cwd
	s.mu.Lock()
	mine := s.remembered
	s.mu.Unlock()
	v := policy.Strictest(rs.EvaluateOnDisk("read", subjects), mine.EvaluateOnDisk("read", subjects))
	switch v.Decision {
	case policy.Deny:
		return host.Landing{}, fmt.Errorf("the permission rule `%s` denies reading it", v.Rule)
	case policy.Ask:
		if mode.AskRule() != policy.Allow {
			return host.Landing{}, fmt.Errorf("the permission rule `%s` asks before reading it; read it with the read tool", v.Rule)
		}
	}
	return l, nil
}

// readLanding reads a landed file whole, beneath its root.
func readLanding(l host.Landing) ([]byte, error) {
	f, err := l.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// listDir lists a directory for the model: sorted names, directories
// marked with "/", at most MaxMentionEntries of them.
func listDir(dir string) (entries []string, more int, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	for _, de := range des {
		name := de.Name()
		if name == ".git" {
			continue
		}
		if de.IsDir() {
			name += "/"
		}
		entries = append(entries, name)
	}
	slices.Sort(entries)
	if len(entries) > MaxMentionEntries {
		more = len(entries) - MaxMentionEntries
		entries = entries[:MaxMentionEntries]
	}
	return entries, more, nil
}

// imageType is the MIME type of an image file, by its extension.
func imageType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// cutAtLine cuts s to at most n bytes, at a line end when there is one.
func cutAtLine(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i+1]
	}
	return s
}
