package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-tools/dshd/sandbox"
)

// ErrNoJob is returned for an id the session has no job under.
var ErrNoJob = errors.New("no such background command")

// ErrJobsClosed is returned by Start after Close.
var ErrJobsClosed = errors.New("background commands are shut down")

// Jobs is the table of background commands, each in its own process group,
// keyed by session so one session can never read or kill another's. The
// bridge calls CloseSession when a session closes and the daemon calls
// Close at exit: no background process outlives either.
type Jobs struct {
	mu     sync.Mutex
	next   int
	byID   map[string]*job // id → job; ids are unique across sessions
	closed bool
	// unreadLimit bounds each job's unread output.
	unreadLimit int
	// starting counts, per session, the jobs being started (not yet in
	// byID), so that concurrent starts cannot overshoot a cap.
	starting map[string]int
}

// runningLocked counts the session's jobs that have not ended, and those
// being started.
func (js *Jobs) runningLocked(session string) int {
	n := js.starting[session]
	for _, j := range js.byID {
		if j.session != session {
			continue
		}
		select {
		case <-j.done:
		default:
			n++
		}
	}
	return n
}

// NewJobs returns an empty table. unreadLimit bounds the output a job keeps
// between two reads (the oldest is dropped, and the next read says how
// much); 0 means 1 MiB.
func NewJobs(unreadLimit int) *Jobs {
	if unreadLimit <= 0 {
		unreadLimit = defaultOutputLimit
	}
	return &Jobs{byID: map[string]*job{}, unreadLimit: unreadLimit}
}

type job struct {
	id, session, line string
	sandbox           *sandbox.Policy
	p                 *process
	began             time.Time

	mu      sync.Mutex
	unread  []byte
	dropped int64
	done    chan struct{} // closed, under mu, when the command ended and its output is drained
	out     Outcome       // valid after done
	// changed, when someone waits (see Jobs.Changed), is closed at the
	// next output or at the end.
	changed chan struct{}
}

// closedChan is what Changed returns when there is something to read.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// signalLocked wakes those waiting in Changed. j.mu is held.
func (j *job) signalLocked() {
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
}

// JobStatus is a snapshot of a background command.
type JobStatus struct {
	ID      string
	Command string
	// Sandbox is the policy the command runs under (nil: unsandboxed).
	Sandbox *sandbox.Policy
	Running bool
	// Output is the output since the previous read.
	Output string
	// Dropped counts output bytes lost because nobody read them in time.
	Dropped int64
	// Ended describes how it ended once Running is false.
	Ended Outcome
}

// ErrTooManyJobs is returned by StartCapped when the session already runs
// as many background commands as it may.
var ErrTooManyJobs = errors.New("too many background commands running")

// DefaultMaxJobs is how many background commands one session may run at
// once unless configured otherwise.
const DefaultMaxJobs = 32

// Start runs c in the background for session and returns its id.
// c.Timeout, when positive, kills it after that long; c.Live is ignored.
func (js *Jobs) Start(session string, c Command) (string, error) {
	return js.StartCapped(session, c, 0)
}

// StartCapped is Start refusing, with an error wrapping ErrTooManyJobs, a
// command when session already runs max of them (max <= 0: no cap). Each
// job costs descriptors and threads; without a cap a model could start
// thousands and take the daemon down.
func (js *Jobs) StartCapped(session string, c Command, max int) (string, error) {
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		return "", ErrJobsClosed
	}
	if max > 0 {
		if n := js.runningLocked(session); n >= max {
			js.mu.Unlock()
			return "", fmt.Errorf("%w: this session already runs %d (the limit)", ErrTooManyJobs, n)
		}
	}
	js.next++
	id := fmt.Sprintf("bash_%d", js.next)
	if js.starting == nil {
		js.starting = map[string]int{}
	}
	js.starting[session]++ // counts against the cap until it is in byID
	js.mu.Unlock()
	started := func() {
		js.mu.Lock()
		if js.starting[session]--; js.starting[session] == 0 {
			delete(js.starting, session)
		}
		js.mu.Unlock()
	}

	p, err := start(c)
	if err != nil {
		started()
		return "", err
	}
	j := &job{id: id, session: session, line: c.Line, sandbox: c.Sandbox, p: p, began: time.Now(), done: make(chan struct{})}
	js.mu.Lock()
	if js.starting[session]--; js.starting[session] == 0 {
		delete(js.starting, session)
	}
	if js.closed { // Close ran while we started
		js.mu.Unlock()
		p.kill(syscall.SIGKILL)
		_, _ = p.wait()
		p.out.Close()
		p.release()
		return "", ErrJobsClosed
	}
	js.byID[id] = j
	js.mu.Unlock()

	stop := make(chan struct{})
	drained := p.drain(&cappedSink{j: j, limit: js.unreadLimit}, stop)
	go func() {
		res, timedOut, _ := p.waitOrKill(c.Timeout, nil) // Kill ends a job, not a context
		p.kill(syscall.SIGKILL)                          // stragglers left in the group
		close(stop)
		<-drained
		j.mu.Lock()
		j.out.TimedOut = timedOut
		j.out.Duration = time.Since(j.began)
		describeExit(&j.out, res)
		close(j.done)
		j.signalLocked()
		j.mu.Unlock()
	}()
	return id, nil
}

// cappedSink appends to a job's unread output, dropping the oldest bytes
// past limit.
type cappedSink struct {
	j     *job
	limit int
}

func (s *cappedSink) Write(b []byte) (int, error) {
	j := s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	j.unread = append(j.unread, b...)
	if over := len(j.unread) - s.limit; over > 0 {
		j.dropped += int64(over)
		j.unread = append(j.unread[:0], j.unread[over:]...)
	}
	j.signalLocked()
	return len(b), nil
}

func (js *Jobs) lookup(session, id string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok || j.session != session {
		return nil, fmt.Errorf("%w: %q", ErrNoJob, id)
	}
	return j, nil
}

// Read returns the output of job id since the previous Read and its state.
// A finished job is forgotten once its last output has been read.
func (js *Jobs) Read(session, id string) (JobStatus, error) {
	j, err := js.lookup(session, id)
	if err != nil {
		return JobStatus{}, err
	}
	finished := false
	select {
	case <-j.done:
		finished = true
	default:
	}
	j.mu.Lock()
	st := JobStatus{
		ID: id, Command: j.line, Sandbox: j.sandbox, Running: !finished,
		Output:  strings.ToValidUTF8(string(j.unread), "\uFFFD"),
		Dropped: j.dropped,
	}
	if finished {
		st.Ended = j.out
	}
	j.unread = j.unread[:0]
	j.dropped = 0
	j.mu.Unlock()
	if finished {
		js.mu.Lock()
		delete(js.byID, id)
		js.mu.Unlock()
	}
	return st, nil
}

// Changed returns a channel that is closed once job id has output Read
// has not returned yet, or has ended: at once if it has either now. It is
// how a caller follows a job's output without polling:
//
//	for {
//		ch, err := js.Changed(session, id)
//		...
//		<-ch // or a select with ctx.Done()
//		st, err := js.Read(session, id)
//		...
//		if !st.Running {
//			break
//		}
//	}
func (js *Jobs) Changed(session, id string) (<-chan struct{}, error) {
	j, err := js.lookup(session, id)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	select {
	case <-j.done:
		return j.done, nil
	default:
	}
	if len(j.unread) > 0 || j.dropped > 0 {
		return closedChan, nil
	}
	if j.changed == nil {
		j.changed = make(chan struct{})
	}
	return j.changed, nil
}

// Wait blocks until job id has ended, the timeout passed or ctx ended,
// and reports whether the job ended.
func (js *Jobs) Wait(ctx context.Context, session, id string, timeout time.Duration) (bool, error) {
	j, err := js.lookup(session, id)
	if err != nil {
		return false, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-j.done:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Kill ends job id's whole process group: SIGTERM, then SIGKILL if it is
// still there after a short grace. It returns the job's final status,
// including output not yet read.
func (js *Jobs) Kill(session, id string) (JobStatus, error) {
	j, err := js.lookup(session, id)
	if err != nil {
		return JobStatus{}, err
	}
	terminate([]*job{j})
	return js.Read(session, id)
}

// terminateGrace is how long a group gets to exit after SIGTERM.
const terminateGrace = 500 * time.Millisecond

func terminate(jobs []*job) {
	for _, j := range jobs {
		j.p.kill(syscall.SIGTERM)
	}
	grace := time.NewTimer(terminateGrace)
	defer grace.Stop()
wait:
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-grace.C:
			break wait
		}
	}
	for _, j := range jobs {
		select {
		case <-j.done:
		default:
			j.p.kill(syscall.SIGKILL)
		}
	}
	for _, j := range jobs {
		<-j.done
	}
}

// List returns the ids of session's jobs, running or unread.
func (js *Jobs) List(session string) []string {
	js.mu.Lock()
	defer js.mu.Unlock()
	var ids []string
	for id, j := range js.byID {
		if j.session == session {
			ids = append(ids, id)
		}
	}
	return ids
}

// CloseSession kills every job of session and forgets them.
func (js *Jobs) CloseSession(session string) {
	js.closeWhere(func(j *job) bool { return j.session == session })
}

// Close kills every job of every session; later Starts fail with
// ErrJobsClosed. It is safe to call more than once.
func (js *Jobs) Close() error {
	js.mu.Lock()
	js.closed = true
	js.mu.Unlock()
	js.closeWhere(func(*job) bool { return true })
	return nil
}

func (js *Jobs) closeWhere(match func(*job) bool) {
	js.mu.Lock()
	var victims []*job
	for id, j := range js.byID {
		if match(j) {
			victims = append(victims, j)
			delete(js.byID, id)
		}
	}
	js.mu.Unlock()
	terminate(victims)
}
