package grants

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/internal/atomicfile"
	"github.com/dsh-tools/dshd/policy"
)

// FileName is the name of a grants file.
const FileName = "settings.local.json"

// ProjectFile is the project-scope grants file of a session in cwd.
func ProjectFile(cwd string) string { return filepath.Join(cwd, ".dshd", FileName) }

// Grant is one remembered rule and where it is kept.
type Grant struct {
	Scope    policy.Scope
	Decision policy.Decision // Allow or Deny
	Rule     policy.Rule
}

// Store reads and changes the grants files. It is safe for concurrent use;
// the zero Store is not: use [New].
type Store struct {
	user string // the user-scope file; "" when there is none
	now  func() time.Time

	mu    sync.Mutex
	files map[string]*cached
	sets  map[string]*cachedSet // by cwd
}

// cachedSet is the rule set RuleSet built from the files' contents.
type cachedSet struct {
	project, user *cached
	rs            policy.RuleSet
	errs          []error
}

// cached is what a file held when it had stamp.
type cached struct {
	info    fs.FileInfo // nil: the file did not exist
	perms   perms
	err     error
	checked time.Time // when the file was last found unchanged (under Store.mu)
}

// Recheck is how long a file's cached content is used without looking at
// the file again. Every permission verdict asks for the grants, a turn of
// a thousand calls a thousand times in a second, and the two stats were a
// tenth of an allowed call's CPU time; an answer given in another daemon
// (another editor window) applies from this long after it was written,
// one given through this Store at once.
const Recheck = 100 * time.Millisecond

// New returns a store whose user-scope grants live in userFile (empty: no
// user scope; Add then refuses it).
func New(userFile string) *Store {
	return &Store{user: userFile, now: time.Now, files: map[string]*cached{}, sets: map[string]*cachedSet{}}
}

// File returns the file of a scope for a session in cwd ("" for the session
// scope, and for the user scope without a user file).
func (s *Store) File(cwd string, scope policy.Scope) string {
	switch scope {
	case policy.ScopeProject:
		return ProjectFile(cwd)
	case policy.ScopeUser:
		return s.user
	}
	return ""
}

// Files returns every file a session in cwd reads grants from, the paths
// tools must never write.
func (s *Store) Files(cwd string) []string {
	files := []string{ProjectFile(cwd)}
	if s.user != "" {
		files = append(files, s.user)
	}
	return files
}

// Grants returns the grants for a session in cwd, project scope first, and
// the problems of files that could not be used (each a *config.FileError
// naming the file); such a file contributes no grants.
func (s *Store) Grants(cwd string) ([]Grant, []error) {
	var user *cached
	if s.user != "" {
		user = s.read(s.user)
	}
	return s.grantsOf(s.read(ProjectFile(cwd)), user)
}

// grantsOf lists the grants of a project file's and a user file's
// contents (user nil: no user file).
func (s *Store) grantsOf(project, user *cached) ([]Grant, []error) {
	var out []Grant
	var errs []error
	for _, f := range []struct {
		scope policy.Scope
		c     *cached
	}{{policy.ScopeProject, project}, {policy.ScopeUser, user}} {
		scope, c := f.scope, f.c
		if c == nil {
			continue
		}
		if c.err != nil {
			errs = append(errs, c.err)
			continue
		}
		for _, r := range c.perms.allow {
			out = append(out, Grant{scope, policy.Allow, r})
		}
		for _, r := range c.perms.deny {
			out = append(out, Grant{scope, policy.Deny, r})
		}
	}
	return out, errs
}

// RuleSet returns the grants for a session in cwd as a rule set bound to
// cwd, and the problems of unusable files. Every permission verdict asks
// for it, so while the files are unchanged it costs their two stats: the
// rule set is built once per change and shared, and callers must not
// modify it.
func (s *Store) RuleSet(cwd string) (policy.RuleSet, []error) {
	var project, user *cached
	project = s.read(ProjectFile(cwd))
	if s.user != "" {
		user = s.read(s.user)
	}
	s.mu.Lock()
	if c := s.sets[cwd]; c != nil && c.project == project && c.user == user {
		s.mu.Unlock()
		return c.rs, c.errs
	}
	s.mu.Unlock()
	gs, errs := s.grantsOf(project, user)
	rs := policy.RuleSet{Cwd: cwd}
	for _, g := range gs {
		rs.Add(g.Decision, g.Rule)
	}
	s.mu.Lock()
	s.sets[cwd] = &cachedSet{project: project, user: user, rs: rs, errs: errs}
	s.mu.Unlock()
	return rs, errs
}

// read returns the file's content: from the cache when it was checked
// less than [Recheck] ago or has not changed since it was read.
func (s *Store) read(path string) *cached {
	now := s.now()
	s.mu.Lock()
	c := s.files[path]
	if c != nil && now.Sub(c.checked) < Recheck {
		s.mu.Unlock()
		return c
	}
	s.mu.Unlock()
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &cached{err: &config.FileError{Path: path, Err: err}}
	}
	if c != nil && sameFile(c.info, fi) {
		s.mu.Lock()
		c.checked = now
		s.mu.Unlock()
		return c
	}
	c = load(path)
	c.checked = now
	s.mu.Lock()
	s.files[path] = c
	s.mu.Unlock()
	return c
}

// sameFile reports whether two stats describe the same unchanged file (or
// both a missing one).
func sameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func load(path string) *cached {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &cached{}
	}
	if err != nil {
		return &cached{err: &config.FileError{Path: path, Err: err}}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &cached{err: &config.FileError{Path: path, Err: err}}
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return &cached{info: fi, err: &config.FileError{Path: path, Err: err}}
	}
	p, err := parse(path, b.Bytes())
	return &cached{info: fi, perms: p, err: err}
}

// perms is a file's rules.
type perms struct {
	allow, deny []policy.Rule
}

// fileJSON is the file's shape.
type fileJSON struct {
	Permissions permsJSON `json:"permissions"`
}

type permsJSON struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// parse decodes a grants file; the errors point at the line and column of
// the problem, like a settings file's.
func parse(path string, data []byte) (perms, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return perms{}, nil
	}
	s, err := config.Parse(path, data)
	if err != nil {
		return perms{}, err
	}
	p := s.Permissions
	other := s
	other.Permissions = config.Permissions{}
	if p.DefaultMode != "" || len(p.Ask) > 0 || p.Remember != "" || !isZero(other) {
		return perms{}, &config.FileError{Path: path, Err: errors.New("only permissions.allow and permissions.deny belong in a file of remembered rules; put other settings in settings.json")}
	}
	var out perms
	for _, l := range []struct {
		name  string
		texts []string
		into  *[]policy.Rule
	}{{"allow", p.Allow, &out.allow}, {"deny", p.Deny, &out.deny}} {
		for _, text := range l.texts {
			r, err := policy.ParseRule(text)
			if err != nil {
				return perms{}, locate(path, data, text, fmt.Errorf("permissions.%s: %w", l.name, err))
			}
			*l.into = append(*l.into, r)
		}
	}
	return out, nil
}

func isZero(s config.Settings) bool {
	b, _ := json.Marshal(s)
	var zero config.Settings
	z, _ := json.Marshal(zero)
	return bytes.Equal(b, z)
}

// locate points a rule's error at the rule's place in the file.
func locate(path string, data []byte, value string, err error) error {
	fe := &config.FileError{Path: path, Err: err}
	quoted, _ := json.Marshal(value)
	if i := bytes.Index(data, quoted); i >= 0 {
		fe.Line = bytes.Count(data[:i], []byte{'\n'}) + 1
		fe.Column = i - bytes.LastIndexByte(data[:i], '\n')
	}
	return fe
}

// Note is what a change did besides the change itself that the person
// should know: a damaged file moved aside.
type Note struct {
	// Damaged is the error of the damaged file that was moved aside, and
	// KeptAs where it went; both empty when nothing was damaged.
	Damaged error
	KeptAs  string
}

// Add remembers rules with decision d (Allow or Deny) in the file of scope
// for a session in cwd. A rule already there is not added twice; an allow
// being added drops the same rule from deny and the other way round, so
// the file says the latest answer.
func (s *Store) Add(cwd string, scope policy.Scope, d policy.Decision, rules ...policy.Rule) (Note, error) {
	if d != policy.Allow && d != policy.Deny {
		return Note{}, fmt.Errorf("grants: cannot remember a %v rule", d)
	}
	path := s.File(cwd, scope)
	if path == "" {
		return Note{}, fmt.Errorf("grants: no file for the %s scope", scope)
	}
	return s.update(path, scope == policy.ScopeProject, func(p *perms) bool {
		changed := false
		for _, r := range rules {
			mine, other := &p.allow, &p.deny
			if d == policy.Deny {
				mine, other = other, mine
			}
			if before := len(*other); before > 0 {
				*other = slices.DeleteFunc(*other, func(x policy.Rule) bool { return x == r })
				changed = changed || len(*other) != before
			}
			if !slices.Contains(*mine, r) {
				*mine = append(*mine, r)
				changed = true
			}
		}
		return changed
	})
}

// Remove forgets a grant. Removing one that is not there (already revoked
// elsewhere) is not an error.
func (s *Store) Remove(cwd string, g Grant) (Note, error) {
	path := s.File(cwd, g.Scope)
	if path == "" {
		return Note{}, fmt.Errorf("grants: no file for the %s scope", g.Scope)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return Note{}, nil
	}
	return s.update(path, false, func(p *perms) bool {
		list := &p.allow
		if g.Decision == policy.Deny {
			list = &p.deny
		}
		before := len(*list)
		*list = slices.DeleteFunc(*list, func(x policy.Rule) bool { return x == g.Rule })
		return len(*list) != before
	})
}

// update changes a file under its lock: read, edit, write atomically. A
// damaged file is moved aside first when edit changes anything, and kept
// when it does not.
func (s *Store) update(path string, ignore bool, edit func(*perms) bool) (Note, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Note{}, fmt.Errorf("grants: %w", err)
	}
	if ignore {
		if err := ensureIgnored(dir); err != nil {
			return Note{}, fmt.Errorf("grants: git-ignoring %s: %w", path, err)
		}
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return Note{}, fmt.Errorf("grants: locking %s: %w", path, err)
	}
	defer unlock()
	var note Note
	var p perms
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Note{}, &config.FileError{Path: path, Err: err}
	default:
		p, note.Damaged = parse(path, data)
	}
	if !edit(&p) {
		return Note{}, nil
	}
	if note.Damaged != nil {
		note.KeptAs = path + ".damaged-" + s.now().UTC().Format("20060102T150405.000Z")
		if err := os.Rename(path, note.KeptAs); err != nil {
			return Note{}, fmt.Errorf("grants: keeping the damaged %s: %w", path, err)
		}
	}
	if err := writeAtomic(path, encode(p)); err != nil {
		return note, fmt.Errorf("grants: %w", err)
	}
	s.mu.Lock()
	delete(s.files, path)
	s.mu.Unlock()
	return note, nil
}

func encode(p perms) []byte {
	texts := func(rs []policy.Rule) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.String()
		}
		return out
	}
	b, _ := json.MarshalIndent(fileJSON{Permissions: permsJSON{Allow: texts(p.allow), Deny: texts(p.deny)}}, "", "  ")
	return append(b, '\n')
}

// writeAtomic replaces path with data (0644), atomically: a reader sees
// the old file or the new one.
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }

// ignoreLines are what the project directory's .gitignore must hold: the
// file, its lock, damaged copies and temporary files.
var ignoreLines = []string{FileName, FileName + ".*", "." + FileName + ".tmp-*"}

// ensureIgnored makes dir/.gitignore ignore the grants file, creating it
// or appending the missing lines.
func ensureIgnored(dir string) error {
	path := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range ignoreLines {
		if !have[l] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if len(data) == 0 {
		return writeAtomic(path, []byte("# dshd: remembered permission answers stay on this machine\n"+strings.Join(add, "\n")+"\n"))
	}
	if data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	return writeAtomic(path, append(data, strings.Join(add, "\n")+"\n"...))
}
