package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-tools/dshd/internal/procgroup"
	"github.com/dsh-tools/dshd/internal/shell"
	"github.com/dsh-tools/dshd/sandbox"
)

// Command describes one shell command for [Run] or [Jobs.Start].
type Command struct {
	// Line is run by bash -c.
	Line string
	// Dir is the working directory.
	Dir string
	// Env, when non-nil, replaces the environment (default: the daemon's,
	// plus pager variables that keep git and friends from waiting on a
	// terminal).
	Env []string
	// Timeout, when positive, kills the process group after that long.
	Timeout time.Duration
	// OutputLimit bounds the captured output in bytes; past it the middle
	// is dropped (the start and the end are what a reader needs). 0 = 1 MiB.
	OutputLimit int
	// Live, when non-nil, receives all output as it arrives, uncapped.
	Live io.Writer
	// Sandbox, when non-nil, runs the command under this OS sandbox
	// policy (package sandbox), started by Servers (nil: the program's
	// own, [sandbox.Start]).
	Sandbox *sandbox.Policy
	Servers *sandbox.Servers
}

// Outcome is how a command ended.
type Outcome struct {
	// Output is stdout and stderr interleaved as written, capped.
	Output string
	// Truncated reports that the middle of Output was dropped.
	Truncated bool
	// ExitCode is set when the command exited on its own.
	ExitCode *int
	// Signal names the signal that ended the command, if one did.
	Signal string
	// TimedOut reports that Timeout ended the command.
	TimedOut bool
	// Cancelled reports that the context ended the command.
	Cancelled bool
	// Duration is the wall time of the run.
	Duration time.Duration
}

// killGrace bounds how long output is awaited after the command's process
// group was killed: only a descendant that escaped the group (setsid) can
// hold the pipe open that long.
const killGrace = 2 * time.Second

// defaultOutputLimit is [Command.OutputLimit]'s default.
const defaultOutputLimit = 1 << 20

// process is one started command: its own process group, guarded so that
// it dies with the daemon, and its output pipe.
type process struct {
	pid   int
	wait  func() (syscall.WaitStatus, error) // once; error: not how it ended
	group *procgroup.Group
	out   *os.File // read end of the output pipe
}

// start launches c in a new process group. stdin is /dev/null; stdout and
// stderr share one pipe whose write end only the child holds, so the
// daemon's stdout is never inherited and EOF means every writer is gone.
// A sandboxed command is started by its policy's sandbox server.
func start(c Command) (*process, error) {
	bash, err := shell.Name()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close() // the child has its own copy
	env := c.Env
	if env == nil {
		env = append(os.Environ(), "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	}
	argv := []string{bash, "-c", c.Line}
	p := &process{out: r}
	if c.Sandbox != nil {
		servers := c.Servers
		if servers == nil {
			servers = sandbox.DefaultServers()
		}
		sp, err := servers.Start(*c.Sandbox, sandbox.Spec{Argv: argv, Dir: c.Dir, Env: env, Stdout: w, Stderr: w})
		if err != nil {
			r.Close()
			return nil, err
		}
		p.pid, p.wait = sp.Pid, sp.Wait
	} else {
		cmd := exec.Command(bash, argv[1:]...)
		cmd.Dir, cmd.Env = c.Dir, env
		cmd.Stdin = nil // /dev/null
		cmd.Stdout, cmd.Stderr = w, w
		// Its own process group, so that cancelling can kill everything it started.
		procgroup.Isolate(cmd)
		if err := cmd.Start(); err != nil {
			r.Close()
			return nil, fmt.Errorf("start %q: %w", c.Line, err)
		}
		p.pid, p.wait = cmd.Process.Pid, func() (syscall.WaitStatus, error) { return waitStatus(cmd) }
	}
	// A command killed with its daemon must take its whole process group
	// along, and nothing of the daemon runs then: the group's watchdog does it.
	p.group = procgroup.Guard(p.pid)
	return p, nil
}

// waitStatus waits for cmd; the error is one that says nothing of how the
// command ended (an exit status other than 0 is not an error here).
func waitStatus(cmd *exec.Cmd) (syscall.WaitStatus, error) {
	err := cmd.Wait()
	var ws syscall.WaitStatus
	if cmd.ProcessState == nil {
		return ws, err
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	ws, _ = cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, err
}

// release retires the watchdog once the command was reaped and its group
// killed (retiring it kills the group).
func (p *process) release() { p.group.Release() }

// kill signals the whole process group. ESRCH (already gone) is fine.
func (p *process) kill(sig syscall.Signal) { p.group.Signal(sig) }

// drain copies the output to w until EOF. The returned channel closes once
// stop was closed, the output drained (or the grace period after stop
// passed) and the watchdog retired. The caller closes stop only after the
// command was reaped and its group killed: EOF alone proves nothing, since a
// command may close its output and go on running (coreutils close stdout in
// an exit handler), and retiring the watchdog kills the group.
func (p *process) drain(w io.Writer, stop <-chan struct{}) <-chan struct{} {
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(w, p.out)
	}()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		<-stop
		select {
		case <-copied:
		case <-time.After(killGrace):
			p.out.Close() // unblocks the copy
			<-copied
		}
		p.out.Close()
		p.release()
	}()
	return finished
}

// Run runs c in its own process group and waits for it, ctx or the
// timeout. On cancellation or timeout the whole group is killed; when the
// command ends on its own, whatever it left running in its group is killed
// too, so no process outlives the call (use [Jobs] for long-lived ones).
// An error means the command could not be started; how it ended is in the
// Outcome.
func Run(ctx context.Context, c Command) (*Outcome, error) {
	limit := c.OutputLimit
	if limit <= 0 {
		limit = defaultOutputLimit
	}
	buf := newHeadTail(limit)
	var sink io.Writer = buf
	if c.Live != nil {
		sink = io.MultiWriter(buf, c.Live)
	}
	began := time.Now()
	p, err := start(c)
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	drained := p.drain(sink, stop)
	res, timedOut, cancelled := p.waitOrKill(c.Timeout, ctx.Done())
	o := &Outcome{TimedOut: timedOut, Cancelled: cancelled}
	p.kill(syscall.SIGKILL) // stragglers the command left in its group
	close(stop)
	<-drained
	o.Duration = time.Since(began)
	o.Output, o.Truncated = buf.String()
	describeExit(o, res)
	return o, nil
}

// waitResult is how a process ended, or why that is unknown.
type waitResult struct {
	status syscall.WaitStatus
	err    error
}

// waitOrKill waits for p to exit. When timeout passes first (0: no
// timeout) or cancel closes first (nil: never), it kills p's group with
// SIGKILL, says which of the two happened, and waits for the exit.
func (p *process) waitOrKill(timeout time.Duration, cancel <-chan struct{}) (res waitResult, timedOut, cancelled bool) {
	waited := make(chan waitResult, 1)
	go func() {
		ws, err := p.wait()
		waited <- waitResult{ws, err}
	}()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case res = <-waited:
		return res, false, false
	case <-timer:
		timedOut = true
	case <-cancel:
		cancelled = true
	}
	p.kill(syscall.SIGKILL)
	return <-waited, timedOut, cancelled
}

func describeExit(o *Outcome, res waitResult) {
	if res.err != nil {
		return
	}
	if res.status.Signaled() {
		o.Signal = signalName(res.status.Signal())
		return
	}
	code := res.status.ExitStatus()
	o.ExitCode = &code
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGBUS:
		return "SIGBUS"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// headTail keeps the first and last limit/2 bytes written and counts what
// it dropped in between.
type headTail struct {
	mu      sync.Mutex
	limit   int
	head    []byte
	tail    []byte // ring buffer once full
	tailPos int
	tailFul bool
	dropped int64
}

func newHeadTail(limit int) *headTail {
	return &headTail{limit: limit}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	headCap := h.limit / 2
	if len(h.head) < headCap {
		k := min(headCap-len(h.head), len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	tailCap := h.limit - headCap
	for len(p) > 0 && tailCap > 0 {
		if !h.tailFul {
			k := min(tailCap-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			if len(h.tail) == tailCap {
				h.tailFul = true
			}
			continue
		}
		// Overwrite the oldest byte(s).
		k := min(tailCap-h.tailPos, len(p))
		copy(h.tail[h.tailPos:], p[:k])
		h.dropped += int64(k)
		h.tailPos = (h.tailPos + k) % tailCap
		p = p[k:]
	}
	if tailCap == 0 {
		h.dropped += int64(len(p))
	}
	return n, nil
}

// String returns the kept output, with a marker where bytes were dropped.
func (h *headTail) String() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sb strings.Builder
	sb.Write(h.head)
	if h.dropped > 0 {
		fmt.Fprintf(&sb, "\n[… %d bytes of output omitted …]\n", h.dropped)
	}
	sb.Write(h.tail[h.tailPos:])
	sb.Write(h.tail[:h.tailPos])
	// A cut can split a rune, and commands print any bytes; results must
	// survive a JSON round trip unchanged.
	return strings.ToValidUTF8(sb.String(), "\uFFFD"), h.dropped > 0
}
