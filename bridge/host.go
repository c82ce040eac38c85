package bridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/internal/shell"
	"github.com/dsh-tools/dshd/internal/work"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/sandbox"
)

// turnHost is the [host.Host] of one tool call of a turn. It holds the
// call's landing: where its path subjects land, computed once by the
// policy's listeners (see session.landing), checked again by the landing
// guard before the call runs and after a permission prompt, and the only
// paths the call's tool may open ([turnHost.Land]).
type turnHost struct {
	turn *Turn
	sess *session

	mu      sync.Mutex
	landing *policy.Landing
	stored  *policy.RuleSet // the remembered answers (see session.storedRules)
	// asked: a permission prompt for the call was sent since the landing
	// was judged, so the landing guard must land the paths again.
	asked bool
	// relandedAfterAsk: the landing guard landed the paths again after
	// the prompt, and landing is that fresh landing.
	relandedAfterAsk bool
}

// relanded replaces the call's landing with fresh, the same places landed
// again after the permission prompt.
func (h *turnHost) relanded(fresh policy.Landing) {
	h.mu.Lock()
	h.landing = &fresh
	h.relandedAfterAsk = h.asked
	h.mu.Unlock()
}

// landingFresh reports whether the call's landing (and what its lstat
// calls saw) is from after the last permission prompt, if there was one.
func (h *turnHost) landingFresh() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.asked || h.relandedAfterAsk
}

// markAsked records that the call's permission prompt is being sent.
func (h *turnHost) markAsked() {
	h.mu.Lock()
	h.asked = true
	h.relandedAfterAsk = false
	h.mu.Unlock()
}

// wasAsked reports whether a permission prompt was sent for the call.
func (h *turnHost) wasAsked() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked
}

// judged returns the call's landing, computing it with land the first
// time.
func (h *turnHost) judged(land func() policy.Landing) policy.Landing {
	return once(h, &h.landing, land)
}

// storedRules returns the call's remembered answers, reading them with
// read the first time.
func (h *turnHost) storedRules(read func() policy.RuleSet) policy.RuleSet {
	return once(h, &h.stored, read)
}

// once returns *p, set with f the first time; h.mu guards p.
func once[T any](h *turnHost, p **T, f func() T) T {
	h.mu.Lock()
	defer h.mu.Unlock()
	if *p == nil {
		v := f()
		*p = &v
	}
	return **p
}

// Land implements [host.Host]: the landing the policy judged for one of
// the call's path subjects.
func (h *turnHost) Land(path string) (host.Landing, error) {
	h.mu.Lock()
	l := h.landing
	h.mu.Unlock()
	if l == nil {
		return host.Landing{}, fmt.Errorf("%s: %w", path, host.ErrNotLanded)
	}
	lp, ok := l.Lookup(path)
	switch {
	case !ok:
		return host.Landing{}, fmt.Errorf("%s is not a path the call declared: %w", path, host.ErrNotLanded)
	case lp.Err != nil:
		return host.Landing{}, fmt.Errorf("cannot resolve %s: %w", path, lp.Err)
	}
	return host.NewLanding(path, lp.Abs, lp.Root), nil
}

var _ host.Host = (*turnHost)(nil)

func (h *turnHost) SessionID() string { return h.sess.id }
func (h *turnHost) Cwd() string       { return h.sess.cwd }
func (h *turnHost) Roots() []string   { return slices.Clone(h.sess.roots) }

// Files goes through the editor for each operation the client advertised
// (so unsaved buffers count) and to the local disk otherwise.
// Sandbox implements [host.Sandboxing].
func (h *turnHost) Sandbox() (sandbox.Policy, bool, error) { return h.sess.sandboxPolicy() }

// SandboxServers implements [host.Sandboxing].
func (h *turnHost) SandboxServers() *sandbox.Servers { return &h.sess.sandboxServers }

func (h *turnHost) Files() host.Files { return &sessionFiles{s: h.sess} }

// Terminals offers editor terminals only when the client advertised them.
func (h *turnHost) Terminals() (host.Terminals, bool) {
	if !h.sess.conn.features.terminal {
		return nil, false
	}
	return &editorTerminals{turn: h.turn}, true
}

func (h *turnHost) Progress(callID string) host.Progress {
	return &progress{turn: h.turn, callID: callID}
}

func (h *turnHost) Plan(_ context.Context, entries []host.PlanEntry) error {
	out := make([]acp.PlanEntry, len(entries))
	for i, e := range entries {
		out[i] = acp.PlanEntry{Content: e.Content, Priority: acp.PlanEntryPriority(e.Priority), Status: acp.PlanEntryStatus(e.Status)}
	}
	h.turn.plan(out)
	return nil
}

// progress streams a running command's output (tier 2 of the terminal
// cards); without the display-terminal convention the output is shown only
// in the final card.
type progress struct {
	turn   *Turn
	callID string
}

func (p *progress) Started(string) {}

func (p *progress) Write(b []byte) (int, error) {
	if len(b) > 0 {
		p.turn.outputChunk(p.callID, b)
	}
	return len(b), nil
}

// sessionFiles is file access on behalf of a session. It opens landings
// only: local access goes beneath the landing's root ([host.Landing]);
// the editor is sent the landing's absolute path, after checking that the
// path still lands there.
type sessionFiles struct{ s *session }

func (f *sessionFiles) ReadTextFile(ctx context.Context, l host.Landing, line, limit int) (string, error) {
	if !f.s.conn.features.readFile {
		return host.LocalFiles{}.ReadTextFile(ctx, l, line, limit)
	}
	// Existence is decided by the disk: editors may answer a missing file
	// with empty text.
	if _, err := l.Stat(); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", l.Abs, fs.ErrNotExist)
	}
	if err := stillLands(l); err != nil {
		return "", err
	}
	req := acp.ReadTextFileRequest{SessionID: f.s.id, Path: l.Abs}
	if line > 0 {
		l := uint32(line)
		req.Line = &l
	}
	if limit > 0 {
		l := uint32(limit)
		req.Limit = &l
	}
	resp, err := f.s.conn.peer().ReadTextFile(ctx, &req)
	if err != nil {
		var ae *acp.Error
		if errors.As(err, &ae) && ae.Code == acp.CodeResourceNotFound {
			return "", fmt.Errorf("read %s: %w", l.Abs, fs.ErrNotExist)
		}
		return "", fmt.Errorf("read %s through the editor: %w", l.Abs, err)
	}
	return resp.Content, nil
}

// WriteTextFile creates the missing parent directories on disk in both
// cases (beneath the landing's root): ACP obliges an editor to create the
// file only. The landing is the one the pipeline's guards confined to the
// session's roots (or the user allowed outside them), so the directories
// are covered by that decision. Before the editor is asked to write, the
// path is checked to land where it did when it was judged: the editor
// opens it by name, and os.Root cannot protect an editor's open.
func (f *sessionFiles) WriteTextFile(ctx context.Context, l host.Landing, content string) error {
	if !f.s.conn.features.writeFile {
		return host.LocalFiles{}.WriteTextFile(ctx, l, content)
	}
	if err := l.MkdirParents(); err != nil {
		return err
	}
	if err := stillLands(l); err != nil {
		return err
	}
	req := acp.WriteTextFileRequest{SessionID: f.s.id, Path: l.Abs, Content: content}
	if _, err := f.s.conn.peer().WriteTextFile(ctx, &req); err != nil {
		return fmt.Errorf("write %s through the editor: %w", l.Abs, err)
	}
	return nil
}

// stillLands checks that a landing's path still resolves to itself (no
// symlink appeared along it) and inside its root, right before the editor
// is asked to open it.
func stillLands(l host.Landing) error {
	now, err := policy.Resolve(string(filepath.Separator), l.Abs)
	if err != nil {
		return fmt.Errorf("%s no longer resolves: %w", l.Written, err)
	}
	if now != l.Abs || l.Root != "" && now != l.Root && !strings.HasPrefix(now, l.Root+string(filepath.Separator)) {
		return fmt.Errorf("%s now lands at %s, not at %s where it was judged (a symlink changed); not sent to the editor", l.Written, now, l.Abs)
	}
	return nil
}

// editorTerminals runs commands in terminals the editor owns (tier 1).
type editorTerminals struct{ turn *Turn }

// releaseTimeout bounds the clean-up calls (kill, output, release) made
// once a command has ended or was given up on. It never limits how long
// the command itself runs: that is the caller's context (the command's
// own timeout), so the deadline starts only when waiting is over.
const releaseTimeout = 5 * time.Second

// createTimeout bounds terminal/create, which does not end with the turn
// (see create).
const createTimeout = time.Minute

// create asks the editor for a terminal and returns its id. Cancelling a
// request is only advisory in ACP: an editor may create the terminal after
// the turn was cancelled, and a terminal nobody releases leaks. So the
// request is not tied to the turn's context: when the turn ends first, Run
// returns at once and the terminal, if the editor creates it, is killed
// and released as soon as its id arrives.
func (e *editorTerminals) create(ctx context.Context, req acp.CreateTerminalRequest) (string, error) {
	s := e.turn.sess
	type result struct {
		id  string
		err error
	}
	answer := make(chan result, 1)
	// Counted work (package work): the request outlives the turn.
	work.Go("editor terminal/create", func() {
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		defer cancel()
		created, err := s.conn.peer().CreateTerminal(callCtx, &req)
		if err != nil {
			answer <- result{err: err}
			return
		}
		answer <- result{created.TerminalID, nil}
	})
	select {
	case r := <-answer:
		if r.err != nil {
			return "", fmt.Errorf("terminal/create: %w", r.err)
		}
		if ctx.Err() == nil {
			return r.id, nil
		}
		e.discard(ctx, r.id)
	case <-ctx.Done():
		work.Go("editor terminal/create", func() {
			if r := <-answer; r.err == nil {
				e.discard(ctx, r.id)
			}
		})
	}
	return "", fmt.Errorf("terminal/create: %w", ctx.Err())
}

// discard kills and releases a terminal created for a turn that ended.
func (e *editorTerminals) discard(ctx context.Context, id string) {
	s := e.turn.sess
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	ref := acp.TerminalRequest{SessionID: s.id, TerminalID: id}
	if _, err := s.conn.peer().KillTerminal(cleanup, &ref); err != nil {
		s.agent.log.Warn("terminal/kill failed", "terminal", id, "err", err)
	}
	if _, err := s.conn.peer().ReleaseTerminal(cleanup, &ref); err != nil {
		s.agent.log.Warn("terminal/release failed", "terminal", id, "err", err)
	}
}

func (e *editorTerminals) Run(ctx context.Context, req host.TerminalRequest) (*presentation.TerminalCard, error) {
	s := e.turn.sess
	bash, err := shell.Name()
	if err != nil {
		return nil, err
	}
	create := acp.CreateTerminalRequest{
		SessionID: s.id,
		Command:   bash,
		Args:      []string{"-c", req.Command},
	}
	if len(req.Launcher) > 0 {
		// The editor starts the sandbox launcher, which runs the command.
		create.Command = req.Launcher[0]
		create.Args = append(slices.Clone(req.Launcher[1:]), append([]string{bash}, create.Args...)...)
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = s.cwd
	}
	create.Cwd = &cwd
	for k, v := range req.Env {
		create.Env = append(create.Env, acp.EnvVariable{Name: k, Value: v})
	}
	slices.SortFunc(create.Env, func(a, b acp.EnvVariable) int { return strings.Compare(a.Name, b.Name) })
	if req.OutputLimit > 0 {
		n := uint64(req.OutputLimit)
		create.OutputByteLimit = &n
	}
	id, err := e.create(ctx, create)
	if err != nil {
		return nil, err
	}
	ref := acp.TerminalRequest{SessionID: s.id, TerminalID: id}
	// Whatever happens from here, the terminal is released, with a
	// deadline of its own that starts when the release is due.
	defer func() {
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if _, err := s.conn.peer().ReleaseTerminal(release, &ref); err != nil {
			s.agent.log.Warn("terminal/release failed", "terminal", id, "err", err)
		}
	}()
	if req.CallID != "" {
		e.turn.embedTerminal(req.CallID, id)
	}
	if req.Started != nil {
		req.Started(id)
	}

	exit, waitErr := s.conn.peer().WaitForTerminalExit(ctx, &ref)
	// The command has ended or is given up on: from now on only clean-up
	// runs, under its own short deadline.
	cleanup, cancelCleanup := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancelCleanup()
	if waitErr != nil {
		// Cancelled or timed out: kill, then collect what it printed.
		if _, err := s.conn.peer().KillTerminal(cleanup, &ref); err != nil {
			s.agent.log.Warn("terminal/kill failed", "terminal", id, "err", err)
		}
	}
	out, outErr := s.conn.peer().TerminalOutput(cleanup, &ref)
	if outErr != nil {
		out = &acp.TerminalOutputResponse{}
	}
	card := &presentation.TerminalCard{Title: req.Command, Output: out.Output, TerminalID: id}
	status := out.ExitStatus
	if waitErr == nil {
		status = &acp.TerminalExitStatus{ExitCode: exit.ExitCode, Signal: exit.Signal}
	}
	if status != nil {
		if status.ExitCode != nil {
			code := int(*status.ExitCode)
			card.ExitCode = &code
		}
		if status.Signal != nil {
			card.Signal = *status.Signal
		}
	}
	if waitErr != nil {
		return card, fmt.Errorf("terminal/wait_for_exit: %w", waitErr)
	}
	if outErr != nil {
		return card, fmt.Errorf("terminal/output: %w", outErr)
	}
	return card, nil
}
