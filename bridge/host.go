package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
)

// turnHost is the [host.Host] of the tool calls of one turn.
type turnHost struct {
	turn *Turn
	sess *session
}

var _ host.Host = (*turnHost)(nil)

func (h *turnHost) SessionID() string { return h.sess.id }
func (h *turnHost) Cwd() string       { return h.sess.cwd }
func (h *turnHost) Roots() []string   { return slices.Clone(h.sess.roots) }

// Files goes through the editor for each operation the client advertised
// (so unsaved buffers count) and to the local disk otherwise.
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

// sessionFiles is file access on behalf of a session.
type sessionFiles struct{ s *session }

func (f *sessionFiles) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	path = absPath(f.s.cwd, path)
	if !f.s.conn.features.readFile {
		return readLocal(ctx, path, line, limit)
	}
	// Existence is decided by the disk: editors may answer a missing file
	// with empty text.
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	req := acp.ReadTextFileRequest{SessionID: f.s.id, Path: path}
	if line > 0 {
		l := uint32(line)
		req.Line = &l
	}
	if limit > 0 {
		l := uint32(limit)
		req.Limit = &l
	}
	var resp acp.ReadTextFileResponse
	if err := f.s.conn.peer().Call(ctx, acp.MethodFSReadTextFile, req, &resp); err != nil {
		var ae *acp.Error
		if errors.As(err, &ae) && ae.Code == acp.CodeResourceNotFound {
			return "", fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
		}
		return "", fmt.Errorf("read %s through the editor: %w", path, err)
	}
	return resp.Content, nil
}

// WriteTextFile creates the missing parent directories on disk in both
// cases: ACP obliges an editor to create the file only. The path is the one
// the pipeline's guards confined to the session's roots (or the user
// allowed outside them), so the directories are covered by that decision.
func (f *sessionFiles) WriteTextFile(ctx context.Context, path, content string) error {
	path = absPath(f.s.cwd, path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if !f.s.conn.features.writeFile {
		return os.WriteFile(path, []byte(content), 0o644)
	}
	req := acp.WriteTextFileRequest{SessionID: f.s.id, Path: path, Content: content}
	if err := f.s.conn.peer().Call(ctx, acp.MethodFSWriteTextFile, req, nil); err != nil {
		return fmt.Errorf("write %s through the editor: %w", path, err)
	}
	return nil
}

// localLineBytes caps each line a windowed local read returns. The read
// tool shows at most its MaxLineBytes (2,000 by default) of a line, so
// this bound is generous; it keeps a window of limit lines within
// limit × localLineBytes of memory however long the file's lines are.
const localLineBytes = 16 << 10

// windowReaders recycles the 64 KiB buffers of windowed reads: a turn of
// 1,000 reads allocated (and zeroed) 64 MiB for them, most of its garbage.
var windowReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// readLocal reads a file from disk: the whole text when line and limit
// are not positive, otherwise a window of lines. A window is streamed, so
// it costs memory for the window only: the lines before it are skipped
// without being kept, and a line longer than localLineBytes comes back
// cut, the rest discarded, with a marker giving its length.
func readLocal(ctx context.Context, path string, line, limit int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if line <= 1 && limit <= 0 {
		b, err := io.ReadAll(f)
		return string(b), err
	}
	br := windowReaders.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() {
		br.Reset(nil) // drop the file
		windowReaders.Put(br)
	}()
	for n := 1; n < line; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, size, err := readLine(br, nil, 0); err != nil && (err != io.EOF || size == 0) {
			if err == io.EOF {
				return "", nil
			}
			return "", err
		}
	}
	var sb strings.Builder
	var buf []byte
	for n := 0; limit <= 0 || n < limit; n++ {
		var size int
		var err error
		// One byte more than the cap holds a kept line's "\n".
		buf, size, err = readLine(br, buf[:0], localLineBytes+1)
		if err != nil && err != io.EOF {
			return "", err
		}
		newline := err == nil
		length := size
		if newline {
			length--
		}
		if length <= localLineBytes {
			sb.Write(buf)
		} else {
			cut := localLineBytes
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			sb.Write(buf[:cut])
			fmt.Fprintf(&sb, "… [line cut: %d bytes]", length)
			if newline {
				sb.WriteByte('\n')
			}
		}
		if !newline {
			break
		}
	}
	return sb.String(), nil
}

// readLine reads one line, its "\n" included, appending at most keep of
// its bytes to buf. size is the line's whole length; err is io.EOF when
// the file ended before a "\n" (size 0: there was no line left).
func readLine(br *bufio.Reader, buf []byte, keep int) (kept []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if room := keep - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		size += len(chunk)
		if err != bufio.ErrBufferFull {
			return buf, size, err
		}
	}
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
	go func() {
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		defer cancel()
		var created acp.CreateTerminalResponse
		err := s.conn.peer().Call(callCtx, acp.MethodTerminalCreate, req, &created)
		answer <- result{created.TerminalID, err}
	}()
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
		go func() {
			if r := <-answer; r.err == nil {
				e.discard(ctx, r.id)
			}
		}()
	}
	return "", fmt.Errorf("terminal/create: %w", ctx.Err())
}

// discard kills and releases a terminal created for a turn that ended.
func (e *editorTerminals) discard(ctx context.Context, id string) {
	s := e.turn.sess
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	ref := acp.TerminalRequest{SessionID: s.id, TerminalID: id}
	if err := s.conn.peer().Call(cleanup, acp.MethodTerminalKill, ref, nil); err != nil {
		s.agent.log.Warn("terminal/kill failed", "terminal", id, "err", err)
	}
	if err := s.conn.peer().Call(cleanup, acp.MethodTerminalRelease, ref, nil); err != nil {
		s.agent.log.Warn("terminal/release failed", "terminal", id, "err", err)
	}
}

func (e *editorTerminals) Run(ctx context.Context, req host.TerminalRequest) (*presentation.TerminalCard, error) {
	s := e.turn.sess
	create := acp.CreateTerminalRequest{
		SessionID: s.id,
		Command:   "bash",
		Args:      []string{"-c", req.Command},
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
		if err := s.conn.peer().Call(release, acp.MethodTerminalRelease, ref, nil); err != nil {
			s.agent.log.Warn("terminal/release failed", "terminal", id, "err", err)
		}
	}()
	if req.CallID != "" {
		e.turn.embedTerminal(req.CallID, id)
	}
	if req.Started != nil {
		req.Started(id)
	}

	var exit acp.WaitForTerminalExitResponse
	waitErr := s.conn.peer().Call(ctx, acp.MethodTerminalWaitForExit, ref, &exit)
	// The command has ended or is given up on: from now on only clean-up
	// runs, under its own short deadline.
	cleanup, cancelCleanup := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancelCleanup()
	if waitErr != nil {
		// Cancelled or timed out: kill, then collect what it printed.
		if err := s.conn.peer().Call(cleanup, acp.MethodTerminalKill, ref, nil); err != nil {
			s.agent.log.Warn("terminal/kill failed", "terminal", id, "err", err)
		}
	}
	var out acp.TerminalOutputResponse
	outErr := s.conn.peer().Call(cleanup, acp.MethodTerminalOutput, ref, &out)
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
