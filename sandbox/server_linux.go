//go:build linux

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-tools/dshd/internal/work"
)

// Commands the daemon starts itself go through a sandbox server: one
// launcher per policy that sets the sandbox up once (namespaces, mounts,
// Landlock) and then starts each command as its own child. Starting the
// launcher per command costs a Go program's start-up and the namespaces'
// set-up, ~15 ms on an idle 2-core machine; asking a server costs one
// round trip on a socket and a fork.
//
// The server applies the sandbox to one thread, its main one, and forks
// every command from that thread: Landlock domains, no_new_privs and
// capabilities belong to a thread and are what a child inherits. A server
// is set up against the paths of its policy as they were when it started
// (Landlock rules and bind mounts hold the directories, not their names):
// when one of them has since appeared, gone or been replaced, the next
// command gets a fresh server.

// maxIdleServers bounds the servers kept for policies no command runs
// under at the moment.
const maxIdleServers = 8

// Start runs one command under p through a sandbox server of its owner,
// starting the server on the policy's first command. The command leads a
// new process group whose id is its pid.
func (ss *Servers) Start(p Policy, s Spec) (*Process, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.PrivateTemp != "" {
		return nil, errors.New("sandbox: PrivateTemp is the launcher's to set")
	}
	if len(s.Argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	a := Probe()
	if !a.Available() {
		return nil, fmt.Errorf("the sandbox cannot run here: %s", a.Reason)
	}
	argv0, err := exec.LookPath(s.Argv[0])
	if err != nil {
		return nil, err
	}
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	req := request{Op: opStart, Path: argv0, Argv: s.Argv, Dir: s.Dir, Env: env}
	// A server that ended between the lookup and the request (killed,
	// or its policy's paths changed) is replaced once.
	for attempt := 0; ; attempt++ {
		srv, err := ss.serverFor(p, a)
		if err != nil {
			return nil, err
		}
		proc, err := srv.start(req, [3]*os.File{s.Stdin, s.Stdout, s.Stderr})
		if errors.Is(err, errServerGone) && attempt == 0 {
			continue
		}
		return proc, err
	}
}

// serverFor returns the running server of p, starting one if there is
// none or if the one there no longer matches the file system.
func (ss *Servers) serverFor(p Policy, a Availability) (*server, error) {
	key := p.Encode()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil, errServersClosed
	}
	if srv := ss.m[key]; srv != nil {
		if srv.usable() {
			return srv, nil
		}
		srv.retire()
		delete(ss.m, key)
	}
	srv, err := newServer(p, a)
	if err != nil {
		return nil, err
	}
	if ss.m == nil {
		ss.m = map[string]*server{}
	}
	ss.m[key] = srv
	ss.evictIdle()
	return srv, nil
}

// evictIdle retires the least recently used idle servers past
// maxIdleServers. ss.mu is held.
func (ss *Servers) evictIdle() {
	for {
		idle, oldest := 0, ""
		for key, srv := range ss.m {
			if srv.idle() {
				idle++
				if oldest == "" || srv.used().Before(ss.m[oldest].used()) {
					oldest = key
				}
			}
		}
		if idle <= maxIdleServers {
			return
		}
		ss.m[oldest].retire()
		delete(ss.m, oldest)
	}
}

// mark is what a path of the policy was when the server set it up. It
// holds the path's inode open (an O_PATH descriptor), so that a directory
// removed and made again cannot reuse its number and pass for it.
type mark struct {
	path     string
	fd       int // -1 when the path did not exist
	dev, ino uint64
}

func marksOf(p Policy) []mark {
	var paths []string
	paths = append(paths, p.WritableRoots...)
	paths = append(paths, p.Protected...)
	if p.Mode == ModeWorkspaceWrite {
		paths = append(paths, TempDirs()...)
	}
	marks := make([]mark, len(paths))
	for i, path := range paths {
		marks[i] = mark{path: path, fd: -1}
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		marks[i] = mark{path: path, fd: fd, dev: st.Dev, ino: st.Ino}
	}
	return marks
}

// holds reports whether the path is still what it was.
func (m mark) holds() bool {
	var st unix.Stat_t
	if err := unix.Stat(m.path, &st); err != nil {
		return m.fd < 0
	}
	return m.fd >= 0 && st.Dev == m.dev && st.Ino == m.ino
}

func closeMarks(marks []mark) {
	for _, m := range marks {
		if m.fd >= 0 {
			unix.Close(m.fd)
		}
	}
}

// Wire format between the daemon and a server: frames of a 4-byte
// big-endian length and a JSON object; a start request carries the
// command's stdin, stdout and stderr as SCM_RIGHTS on its first bytes.
const (
	opStart = "start"
	opWait  = "wait"
)

// maxFrame bounds a frame: a command line and its environment, which the
// kernel bounds too (ARG_MAX).
const maxFrame = 16 << 20

type request struct {
	Op   string   `json:"op"`
	ID   uint64   `json:"id"`
	Path string   `json:"path,omitempty"`
	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
}

type reply struct {
	ID     uint64  `json:"id"`
	Ready  bool    `json:"ready,omitempty"`
	Pid    int     `json:"pid,omitempty"`
	Status *uint32 `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// server is the daemon's end of one sandbox server.
type server struct {
	policy Policy
	marks  []mark
	conn   *os.File        // our end of the socket
	raw    syscall.RawConn // conn's, for sendmsg
	proc   *exec.Cmd
	exited chan struct{} // closed once the launcher was reaped

	wmu sync.Mutex // one frame at a time

	mu       sync.Mutex
	nextID   uint64
	pending  map[uint64]chan reply
	active   int // commands started and not yet waited for
	lastUsed time.Time
	retired  bool
	gone     bool

	endOnce sync.Once
}

func newServer(p Policy, a Availability) (*server, error) {
	path, err := launcherPath()
	if err != nil {
		return nil, err
	}
	// Our end is non-blocking, so that os.File reads it through the
	// poller (and Close ends a read in progress); the server's blocks.
	// Package net would do the same, but importing it makes this
	// package's init, and so every launcher start, wait for a hundred
	// other packages' (~10 ms).
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox server: %w", err)
	}
	if err := unix.SetNonblock(fds[1], false); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, fmt.Errorf("sandbox server: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "sandbox-server"), os.NewFile(uintptr(fds[1]), "sandbox-server")
	defer theirs.Close()
	stage := stageServeDirect
	if a.Namespaces {
		stage = stageServe
	}
	cmd := exec.Command(path, LauncherCommand, "--stage", stage, "--policy", p.Encode())
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.Stderr = os.Stderr              // stdout: /dev/null, never the protocol's
	if a.Namespaces {
		cmd.SysProcAttr = namespaceAttr(p.Network)
	}
	// The marks are taken before the server sets the paths up: a path
	// changed in between fails its mark and gets the next command a new
	// server. What the server would create, it finds made.
	if err := createMissingProtected(p); err != nil {
		ours.Close()
		return nil, err
	}
	marks := marksOf(p)
	if err := cmd.Start(); err != nil {
		ours.Close()
		closeMarks(marks)
		return nil, fmt.Errorf("start the sandbox server: %w", err)
	}
	// The server's goroutines are counted work: they end after the
	// session that used it has closed, when the server exits.
	exited := make(chan struct{})
	work.Go("sandbox server", func() {
		_ = cmd.Wait()
		close(exited)
	})
	raw, err := ours.SyscallConn()
	if err != nil {
		_ = cmd.Process.Kill()
		ours.Close()
		closeMarks(marks)
		return nil, fmt.Errorf("sandbox server: %w", err)
	}
	s := &server{policy: p, marks: marks, conn: ours, raw: raw, proc: cmd, exited: exited,
		pending: map[uint64]chan reply{}, lastUsed: time.Now()}
	var r reply
	if err := readFrame(s.conn, &r); err != nil || !r.Ready {
		s.end()
		if r.Error != "" {
			return nil, fmt.Errorf("sandbox server: %s", r.Error)
		}
		return nil, fmt.Errorf("sandbox server did not start: %v", err)
	}
	work.Go("sandbox server", s.read)
	return s, nil
}

// read hands each reply to whoever waits for it; when the server ends,
// every waiter learns it.
func (s *server) read() {
	for {
		var r reply
		if err := readFrame(s.conn, &r); err != nil {
			break
		}
		s.mu.Lock()
		ch := s.pending[r.ID]
		delete(s.pending, r.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	s.mu.Lock()
	s.gone = true
	for id, ch := range s.pending {
		close(ch)
		delete(s.pending, id)
	}
	s.mu.Unlock()
	s.end()
}

// end closes the server's socket, which ends it, and lets go of its marks.
func (s *server) end() {
	s.endOnce.Do(func() {
		s.conn.Close()
		closeMarks(s.marks)
	})
}

// usable reports whether the server still matches its policy's paths.
func (s *server) usable() bool {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone {
		return false
	}
	for _, m := range s.marks {
		if !m.holds() {
			return false
		}
	}
	return true
}

func (s *server) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active == 0
}

func (s *server) used() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}

// retire ends the server once its last command was waited for: ending it
// earlier would lose those commands' exit statuses.
func (s *server) retire() {
	s.mu.Lock()
	s.retired = true
	idle := s.active == 0
	s.mu.Unlock()
	if idle {
		s.end()
	}
}

// call sends req and returns the channel its reply arrives on (closed if
// the server ends first).
func (s *server) call(req request, files []*os.File) (chan reply, error) {
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return nil, errServerGone
	}
	if req.ID == 0 {
		s.nextID++
		req.ID = s.nextID
	}
	s.pending[req.ID] = ch
	s.mu.Unlock()
	if err := s.send(req, files); err != nil {
		// A socket that refused a frame (the server died: EPIPE) serves
		// no more commands, and a half-written frame would garble the
		// next: the server is gone now, not once its reader notices, so
		// that the caller's retry gets a new one.
		s.mu.Lock()
		delete(s.pending, req.ID)
		s.gone = true
		s.mu.Unlock()
		s.end()
		return nil, errors.Join(errServerGone, err)
	}
	return ch, nil
}

func (s *server) send(req request, files []*os.File) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// The descriptors ride on the length: a stream socket delivers them
	// with the first bytes of the frame.
	var sent int
	var serr error
	if err := s.raw.Write(func(fd uintptr) bool {
		sent, serr = unix.SendmsgN(int(fd), hdr[:], oob, nil, 0)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	if _, err := s.conn.Write(hdr[sent:]); err != nil { // the rest, if any, without the rights
		return err
	}
	runtime.KeepAlive(files)
	_, err = s.conn.Write(body)
	return err
}

func (s *server) start(req request, stdio [3]*os.File) (*Process, error) {
	files := make([]*os.File, 3)
	for i, f := range stdio {
		if f == nil {
			null, err := os.Open(os.DevNull)
			if err != nil {
				return nil, err
			}
			defer null.Close()
			f = null
		}
		files[i] = f
	}
	s.mu.Lock()
	s.active++
	s.lastUsed = time.Now()
	s.mu.Unlock()
	ch, err := s.call(req, files)
	var r reply
	ok := false
	if err == nil {
		r, ok = <-ch
	}
	if err != nil || !ok || r.Error != "" {
		s.done()
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, errServerGone
		}
		return nil, fmt.Errorf("start %s: %s", req.Argv[0], r.Error)
	}
	id := r.ID
	return &Process{Pid: r.Pid, wait: sync.OnceValues(func() (syscall.WaitStatus, error) {
		defer s.done()
		ch, err := s.call(request{Op: opWait, ID: id}, nil)
		if err != nil {
			return 0, err
		}
		r, ok := <-ch
		switch {
		case !ok:
			return 0, errServerGone
		case r.Error != "":
			return 0, fmt.Errorf("wait: %s", r.Error)
		case r.Status == nil:
			return 0, errors.New("sandbox server: a reply without status")
		}
		return syscall.WaitStatus(*r.Status), nil
	})}, nil
}

// done counts a command off; a retired server ends with its last one.
func (s *server) done() {
	s.mu.Lock()
	s.active--
	end := s.retired && s.active == 0
	s.mu.Unlock()
	if end {
		s.end()
	}
}

// readFrame reads one frame into v.
func readFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return fmt.Errorf("frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// serve is the server's side: set up, report ready, then start and reap
// commands until the daemon closes the socket (or dies).
func serve(p Policy, namespaced bool) int {
	sock := 3
	w := &frameWriter{fd: sock}
	fail := func(err error) int {
		_ = w.write(reply{Error: err.Error()})
		return failed(err)
	}
	if namespaced {
		if err := setupNamespaces(p); err != nil {
			return fail(err)
		}
	}
	if p.Mode == ModeReadOnly {
		dir, err := os.MkdirTemp("", "dshd-sandbox-")
		if err != nil {
			return fail(fmt.Errorf("private temp directory: %w", err))
		}
		defer os.RemoveAll(dir)
		p.PrivateTemp = dir
	}
	// This thread is the one every command is forked from: it alone gets
	// the sandbox, the others stay free to reap and to reply.
	runtime.LockOSThread()
	if err := restrict(p, namespaced && !p.Network); err != nil {
		return fail(err)
	}
	if err := dropBoundingSet(); err != nil {
		return fail(err)
	}
	if err := clearCapabilities(); err != nil {
		return fail(err)
	}
	// A command could otherwise trace this process to borrow the
	// capabilities its other threads keep in the namespaces.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := w.write(reply{Ready: true}); err != nil {
		return failed(err)
	}
	children := map[uint64]child{}
	r := &frameReader{fd: sock}
	for {
		var req request
		fds, err := r.read(&req)
		if err != nil {
			return 0 // the daemon is gone or done with us
		}
		switch req.Op {
		case opStart:
			c, err := startChild(p, req, fds)
			closeAll(fds)
			if err != nil {
				_ = w.write(reply{ID: req.ID, Error: err.Error()})
				continue
			}
			children[req.ID] = c
			_ = w.write(reply{ID: req.ID, Pid: c.pid})
		case opWait:
			c, ok := children[req.ID]
			if !ok {
				_ = w.write(reply{ID: req.ID, Error: "no such command"})
				continue
			}
			delete(children, req.ID)
			go func() {
				var ws unix.WaitStatus
				for {
					_, err := unix.Wait4(c.pid, &ws, 0, nil)
					if err != unix.EINTR {
						break
					}
				}
				if c.tmp != "" {
					os.RemoveAll(c.tmp)
				}
				st := uint32(ws)
				_ = w.write(reply{ID: req.ID, Status: &st})
			}()
		default:
			for _, fd := range fds {
				unix.Close(fd)
			}
			_ = w.write(reply{ID: req.ID, Error: fmt.Sprintf("unknown request %q", req.Op)})
		}
	}
}

// child is a command a server started and has not reaped yet.
type child struct {
	pid int
	tmp string // its private temp directory (read-only mode)
}

// startChild starts one command from the calling (sandboxed) thread; in
// read-only mode it gets a private temp directory of its own, inside the
// server's, removed once it was reaped.
func startChild(p Policy, req request, fds []int) (c child, err error) {
	if len(fds) != 3 {
		return c, fmt.Errorf("a command needs 3 descriptors, got %d", len(fds))
	}
	if len(req.Argv) == 0 || req.Path == "" {
		return c, errors.New("no command")
	}
	env := req.Env
	if p.PrivateTemp != "" {
		if c.tmp, err = os.MkdirTemp(p.PrivateTemp, "cmd-"); err != nil {
			return c, fmt.Errorf("private temp directory: %w", err)
		}
		env = setEnv(env, "TMPDIR", c.tmp)
	}
	c.pid, err = syscall.ForkExec(req.Path, req.Argv, &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   env,
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil && c.tmp != "" {
		os.RemoveAll(c.tmp)
	}
	return c, err
}

// frameWriter writes frames on a blocking descriptor, one at a time.
type frameWriter struct {
	mu sync.Mutex
	fd int
}

func (w *frameWriter) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(buf) > 0 {
		n, err := unix.Write(w.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

// frameReader reads frames and the descriptors that come with them from
// a blocking descriptor.
type frameReader struct {
	fd  int
	oob []byte
}

func (r *frameReader) read(v any) ([]int, error) {
	if r.oob == nil {
		r.oob = make([]byte, unix.CmsgSpace(3*4)*2)
	}
	var hdr [4]byte
	var fds []int
	got := 0
	for got < len(hdr) {
		n, oobn, _, _, err := unix.Recvmsg(r.fd, hdr[got:], r.oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if oobn > 0 {
			more, err := parseRights(r.oob[:oobn])
			if err != nil {
				return nil, err
			}
			fds = append(fds, more...)
		}
		if n == 0 {
			closeAll(fds)
			return nil, io.EOF
		}
		got += n
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxFrame {
		closeAll(fds)
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	body := make([]byte, size)
	for got := 0; got < len(body); {
		n, err := unix.Read(r.fd, body[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			closeAll(fds)
			return nil, io.ErrUnexpectedEOF
		}
		got += n
	}
	if err := json.Unmarshal(body, v); err != nil {
		closeAll(fds)
		return nil, err
	}
	return fds, nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
