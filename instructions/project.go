package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// Options configure a [Library].
type Options struct {
	// UserDir is the user's dshd configuration directory
	// ($XDG_CONFIG_HOME/dshd): its AGENTS.md, skills/ and commands/. Empty
	// means no user-level files.
	UserDir string
	// Budget is the number of bytes of instruction files the system prompt
	// holds, all files together (0: [DefaultBudget]).
	Budget int
	// Logger receives the problems found (invalid skills, clashes) and
	// watcher failures (default slog.Default()).
	Logger *slog.Logger
}

// Library finds the instructions, skills and commands of the projects its
// sessions work in. Sessions in the same directory share one [Project]
// and its watches. It is safe for concurrent use.
type Library struct {
	userDir string
	log     *slog.Logger
	budget  atomic.Int64

	mu       sync.Mutex
	projects map[string]*project // by session cwd
}

// NewLibrary returns a Library.
func NewLibrary(opts Options) *Library {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	l := &Library{userDir: opts.UserDir, log: opts.Logger, projects: map[string]*project{}}
	l.budget.Store(int64(opts.Budget))
	return l
}

// SetBudget changes the budget; every open project is read again.
func (l *Library) SetBudget(n int) {
	if l.budget.Swap(int64(n)) == int64(n) {
		return
	}
	l.mu.Lock()
	ps := slices.Collect(maps.Values(l.projects))
	l.mu.Unlock()
	for _, p := range ps {
		p.reload()
	}
}

// Open returns the project of a session working in cwd (an absolute
// path). onChange, optional, runs after every change of the project's
// files, with the new snapshot, on the watcher's goroutine. Close the
// Project when the session ends.
func (l *Library) Open(cwd string, onChange func(*Snapshot)) *Project {
	cwd = filepath.Clean(cwd)
	l.mu.Lock()
	p := l.projects[cwd]
	if p == nil {
		p = newProject(l, cwd)
		l.projects[cwd] = p
	}
	p.mu.Lock()
	p.next++
	id := p.next
	p.subs[id] = onChange
	p.mu.Unlock()
	l.mu.Unlock()
	return &Project{p: p, id: id}
}

// Project is a session's view of its project's instruction files, skills
// and custom commands.
type Project struct {
	p    *project
	id   int
	once sync.Once
}

// Snapshot returns the files as last read. Without a working watcher
// (inotify limits, say) the files are read again on every call, so a
// change is never missed.
func (h *Project) Snapshot() *Snapshot {
	if !h.p.watching.Load() {
		h.p.reload()
	}
	return h.p.snap.Load()
}

// Reload reads the files again now and returns the new snapshot.
func (h *Project) Reload() *Snapshot {
	h.p.reload()
	return h.p.snap.Load()
}

// Close ends the session's use of the project; the last one stops the
// watcher.
func (h *Project) Close() {
	h.once.Do(func() {
		l := h.p.lib
		l.mu.Lock()
		defer l.mu.Unlock()
		h.p.mu.Lock()
		delete(h.p.subs, h.id)
		last := len(h.p.subs) == 0
		h.p.mu.Unlock()
		if last {
			delete(l.projects, h.p.cwd)
			h.p.stop()
		}
	})
}

// Nested returns the instruction files that govern path (an absolute path
// of a file or directory) and are not part of the system prompt: those of
// the directories between path and the session's cwd, inside the root of
// roots that holds path. General first. Each is cut to the budget.
//
// seen, optional, reports whether a path was looked at before (and marks
// it): a session passes one so that each directory costs its look-up once,
// and a file shown once is not shown again. Paths are compared as written
// (cleaned): this decides which advice the model sees, not what it may
// touch, so it costs no symlink resolution.
func (h *Project) Nested(path string, roots []string, seen func(path string) bool) []File {
	if seen == nil {
		seen = func(string) bool { return false }
	}
	p := h.p
	path = filepath.Clean(path)
	root := ""
	for _, r := range roots {
		if r = filepath.Clean(r); within(r, path) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" {
		return nil
	}
	var dirs []string
	if !seen(path) {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			dirs = append(dirs, path)
		}
	}
	for d := filepath.Dir(path); within(root, d); d = filepath.Dir(d) {
		if within(d, p.cwd) || within(d, p.realCwd) {
			break // d is the cwd or above it: in the system prompt already
		}
		if !seen(d) {
			dirs = append(dirs, d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	var files []File
	for _, d := range dirs {
		if within(d, p.cwd) || within(d, p.realCwd) {
			continue
		}
		if path, text, size, ok, err := readInstructionFile(root, d); ok && err == nil {
			files = append(files, File{Path: path, Dir: d, Text: text, Size: size})
		}
	}
	slices.Reverse(files)
	for i := range files {
		applyBudget(files[i:i+1], p.lib.budgetBytes())
	}
	return files
}

func (l *Library) budgetBytes() int {
	if b := int(l.budget.Load()); b > 0 {
		return b
	}
	return DefaultBudget
}

// within reports whether p is dir or lies below it (both clean).
func within(dir, p string) bool {
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Snapshot is what a project's files said when they were last read.
type Snapshot struct {
	// Cwd is the session's directory, Root the repository root above it.
	Cwd, Root string
	// Files are the instruction files of the system prompt: the user's,
	// then the repository root's down to the cwd's.
	Files []File
	// Budget is the budget the files were cut to.
	Budget int
	// Skills and Commands are sorted by name.
	Skills   []Skill
	Commands []Command
	// Problems are the files that could not be used.
	Problems []Problem
}

// Skill returns the skill called name.
func (s *Snapshot) Skill(name string) (Skill, bool) {
	for _, sk := range s.Skills {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// Command returns the custom command called name.
func (s *Snapshot) Command(name string) (Command, bool) {
	for _, c := range s.Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Prompt is the snapshot's section of the system prompt: "# Project
// instructions" with [Snapshot.InstructionsText], then "# Skills" with the
// skills' names and descriptions. It is empty when there are neither. It
// depends on the files only, so it stays byte-identical between model
// requests until a file changes.
func (s *Snapshot) Prompt() string {
	var sb strings.Builder
	if text := s.InstructionsText(); text != "" {
		sb.WriteString("# Project instructions\n\n")
		sb.WriteString(text)
	}
	if len(s.Skills) > 0 {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("# Skills\n\n")
		fmt.Fprintf(&sb, "Skills are instructions for particular tasks. When a task matches a skill's description, load the skill with the `%s` tool before you start, then follow it.\n", SkillToolName)
		for _, sk := range s.Skills {
			fmt.Fprintf(&sb, "- %s: %s\n", sk.Name, oneLine(sk.Description))
		}
	}
	return sb.String()
}

// InstructionsText is the instruction files as the model reads them: a
// sentence on how they apply, then each file under a heading that names
// it and the directory it governs, a cut one followed by a note saying
// so. It is empty when there are no files.
func (s *Snapshot) InstructionsText() string {
	if len(s.Files) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("The instruction files below come from the user and the repository, the most general first; where they disagree, the later, more specific one wins. Instruction files deeper in the tree are shown with the first tool result under their directory.\n")
	for _, f := range s.Files {
		sb.WriteString("\n## ")
		sb.WriteString(f.Path)
		if f.Dir == "" {
			sb.WriteString(" (the user's instructions for every project)\n\n")
		} else {
			fmt.Fprintf(&sb, " (governs %s)\n\n", f.Dir)
		}
		sb.WriteString(strings.TrimRight(f.Text, "\n"))
		sb.WriteByte('\n')
		if f.Truncated {
			sb.WriteString(TruncationNote(f, s.Budget))
		}
	}
	return sb.String()
}

// TruncationNote is the line that follows a truncated file's text.
func TruncationNote(f File, budget int) string {
	return fmt.Sprintf("[dshd: %s was cut to %d of its %d bytes by the instructions budget of %d bytes (setting instructions.budgetBytes); read the file for the rest.]\n", f.Path, len(f.Text), f.Size, budget)
}

// AttachText is how nested instruction files are shown with a tool result.
func AttachText(files []File, budget int) string {
	var sb strings.Builder
	for _, f := range files {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "[Instructions from %s, which govern the files under %s; follow them for work there:]\n", f.Path, f.Dir)
		sb.WriteString(strings.TrimRight(f.Text, "\n"))
		sb.WriteByte('\n')
		if f.Truncated {
			sb.WriteString(TruncationNote(f, budget))
		}
	}
	return sb.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// project is the shared state of the sessions in one directory.
type project struct {
	lib     *Library
	cwd     string
	realCwd string // cwd with symlinks resolved, for comparing landed paths
	root    string

	snap     atomic.Pointer[Snapshot]
	loads    atomic.Int64 // readings of the files, for tests
	watching atomic.Bool
	reloadMu sync.Mutex // one reload at a time
	logged   map[string]bool

	mu      sync.Mutex
	subs    map[int]func(*Snapshot)
	next    int
	watcher *fsnotify.Watcher
	watched map[string]bool
	done    chan struct{}
}

func newProject(l *Library, cwd string) *project {
	p := &project{lib: l, cwd: cwd, realCwd: cwd, subs: map[int]func(*Snapshot){}, watched: map[string]bool{}, logged: map[string]bool{}}
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		p.realCwd = r
	}
	p.root = RepositoryRoot(cwd)
	p.snap.Store(p.load())
	p.logProblems(p.snap.Load())
	w, err := fsnotify.NewWatcher()
	if err != nil {
		l.log.Warn("instruction files are not watched; they are read again for every request", "dir", cwd, "err", err)
		return p
	}
	p.watcher = w
	p.done = make(chan struct{})
	p.watchDirs(p.snap.Load())
	p.watching.Store(true)
	go p.watch()
	return p
}

// dirs where the project's files are looked for.
func (p *project) skillDirs() []sourceDir {
	var ds []sourceDir
	for _, base := range uniq(p.cwd, p.root) {
		ds = append(ds, sourceDir{dir: filepath.Join(base, ".agents", "skills"), base: p.root}, sourceDir{dir: filepath.Join(base, ".claude", "skills"), base: p.root})
	}
	if p.lib.userDir != "" {
		ds = append(ds, sourceDir{dir: filepath.Join(p.lib.userDir, "skills"), user: true})
	}
	return ds
}

func (p *project) commandDirs() []sourceDir {
	var ds []sourceDir
	for _, base := range uniq(p.cwd, p.root) {
		ds = append(ds, sourceDir{dir: filepath.Join(base, ".dshd", "commands"), base: p.root})
	}
	if p.lib.userDir != "" {
		ds = append(ds, sourceDir{dir: filepath.Join(p.lib.userDir, "commands"), user: true})
	}
	return ds
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// load reads every file of the project.
func (p *project) load() *Snapshot {
	p.loads.Add(1)
	s := &Snapshot{Cwd: p.cwd, Root: p.root, Budget: p.lib.budgetBytes()}
	if p.lib.userDir != "" {
		path := filepath.Join(p.lib.userDir, AgentsFile)
		text, size, err := readBounded("", path)
		switch {
		case err == nil:
			s.Files = append(s.Files, File{Path: path, Text: text, Size: size})
		case !errors.Is(err, fs.ErrNotExist):
			s.Problems = append(s.Problems, Problem{Path: path, Message: err.Error()})
		}
	}
	for _, dir := range chainDirs(p.root, p.cwd) {
		path, text, size, ok, err := readInstructionFile(p.root, dir)
		if err != nil {
			s.Problems = append(s.Problems, Problem{Path: path, Message: err.Error()})
			continue
		}
		if ok {
			s.Files = append(s.Files, File{Path: path, Dir: dir, Text: text, Size: size})
		}
	}
	applyBudget(s.Files, s.Budget)
	var problems []Problem
	s.Skills, problems = loadSkills(p.skillDirs())
	s.Problems = append(s.Problems, problems...)
	s.Commands, problems = loadCommands(p.commandDirs())
	s.Problems = append(s.Problems, problems...)
	return s
}

// reload reads the files again and tells the subscribers when anything
// changed.
func (p *project) reload() {
	// The subscribers run after the lock is released: they may read the
	// snapshot, which without a watcher reloads.
	var changed []*Snapshot
	defer func() {
		for _, s := range changed {
			p.notify(s)
		}
	}()
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	for {
		old := p.snap.Load()
		s := p.load()
		// A directory that appeared is watched from now on; what was
		// written into it before the watch was set is caught by reading
		// once more.
		added := p.watcher != nil && p.watchDirs(s) > 0
		if !equalSnapshots(old, s) {
			p.snap.Store(s)
			p.logProblems(s)
			changed = append(changed, s)
		}
		if !added {
			return
		}
	}
}

func (p *project) notify(s *Snapshot) {
	p.mu.Lock()
	subs := make([]func(*Snapshot), 0, len(p.subs))
	for _, f := range p.subs {
		if f != nil {
			subs = append(subs, f)
		}
	}
	p.mu.Unlock()
	for _, f := range subs {
		f(s)
	}
}

// logProblems logs each problem once per project.
func (p *project) logProblems(s *Snapshot) {
	for _, pr := range s.Problems {
		if k := pr.String(); !p.logged[k] {
			p.logged[k] = true
			p.lib.log.Warn("project file not used", "problem", k)
		}
	}
}

// watchDirs watches every directory whose entries matter: the chain from
// the root to the cwd (AGENTS.md, CLAUDE.md, and .agents, .claude, .dshd
// appearing), the skill and command directories and each skill's
// directory, and the user directory.
func (p *project) watchDirs(s *Snapshot) (added int) {
	dirs := chainDirs(p.root, p.cwd)
	for _, base := range uniq(p.cwd, p.root) {
		dirs = append(dirs, filepath.Join(base, ".agents"), filepath.Join(base, ".claude"), filepath.Join(base, ".dshd"))
	}
	if u := p.lib.userDir; u != "" {
		// Until the user directory exists its parent is watched, so that
		// creating it is seen.
		dirs = append(dirs, u)
		if _, err := os.Stat(u); err != nil {
			dirs = append(dirs, filepath.Dir(u))
		}
	}
	for _, d := range p.skillDirs() {
		dirs = append(dirs, d.dir)
		if entries, err := os.ReadDir(d.dir); err == nil {
			for _, e := range entries {
				dirs = append(dirs, filepath.Join(d.dir, e.Name()))
			}
		}
	}
	for _, d := range p.commandDirs() {
		dirs = append(dirs, d.dir)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range dirs {
		if p.watched[d] {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := p.watcher.Add(d); err != nil {
			p.lib.log.Debug("not watching", "dir", d, "err", err)
			continue
		}
		p.watched[d] = true
		added++
	}
	return added
}

// watch reloads after file events until the project is stopped. A burst of
// events (an editor's save) costs one reload: the events already queued
// are drained first.
func (p *project) watch() {
	for {
		select {
		case <-p.done:
			return
		case ev, ok := <-p.watcher.Events:
			if !ok {
				return
			}
			if !p.forget(ev) && !p.drain() {
				continue
			}
			p.reload()
		case err, ok := <-p.watcher.Errors:
			if !ok {
				return
			}
			p.lib.log.Warn("watching instruction files", "dir", p.cwd, "err", err)
			// Events may have been lost: read everything again.
			p.reload()
		}
	}
}

// drain consumes the events already queued and reports whether any of
// them matters.
func (p *project) drain() (relevant bool) {
	for {
		select {
		case ev := <-p.watcher.Events:
			if p.forget(ev) {
				relevant = true
			}
		default:
			return relevant
		}
	}
}

// forget drops a removed or renamed directory from the watched set and
// reports whether the event can change the project's files.
func (p *project) forget(ev fsnotify.Event) (relevant bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	relevant = p.watched[ev.Name] || p.relevantLocked(ev.Name)
	if ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename) {
		delete(p.watched, ev.Name)
	}
	return relevant
}

// relevantLocked reports whether a change of the entry at name, in one of
// the watched directories, can change the project's files. The directories
// of the chain from the root to the cwd are the project's own: every file
// the session's tools write there (a thousand in a turn) raises an event,
// and each used to cost a reading of every instruction, skill and command
// file; now only the names that are looked for do.
func (p *project) relevantLocked(name string) bool {
	dir, base := filepath.Dir(name), filepath.Base(name)
	is := func(names ...string) bool {
		for _, n := range names {
			// Case-insensitively: on macOS and Windows agents.md is AGENTS.md.
			if strings.EqualFold(base, n) {
				return true
			}
		}
		return false
	}
	if slices.Contains(chainDirs(p.root, p.cwd), dir) {
		return is(AgentsFile, ClaudeFile, ".agents", ".claude", ".dshd")
	}
	for _, b := range uniq(p.cwd, p.root) {
		switch dir {
		case filepath.Join(b, ".agents"), filepath.Join(b, ".claude"):
			return is("skills")
		case filepath.Join(b, ".dshd"):
			return is("commands")
		}
	}
	if u := p.lib.userDir; u != "" {
		switch {
		case dir == u:
			return is(AgentsFile, "skills", "commands")
		case name == u:
			return true
		case dir == filepath.Dir(u):
			return false
		}
	}
	// The skill and command directories and each skill's directory: all
	// their entries matter.
	return true
}

func (p *project) stop() {
	if p.watcher == nil {
		return
	}
	close(p.done)
	p.watcher.Close()
}

func equalSnapshots(a, b *Snapshot) bool {
	return a.Budget == b.Budget && slices.Equal(a.Files, b.Files) && slices.Equal(a.Skills, b.Skills) &&
		slices.Equal(a.Commands, b.Commands) && slices.Equal(a.Problems, b.Problems)
}
