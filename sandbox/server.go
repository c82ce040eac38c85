package sandbox

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

// Servers are the sandbox servers of one owner, such as a session: one
// per policy its commands run under, ended by [Servers.Close]. The zero
// value is ready to use.
type Servers struct {
	mu     sync.Mutex
	m      map[string]*server
	closed bool
}

// defaultServers serve [Start].
var defaultServers Servers

// DefaultServers are the program's own servers, which [Start] uses.
func DefaultServers() *Servers { return &defaultServers }

// Start runs one command under p through the program's own sandbox
// servers, which live as long as it does (see [Servers.Start]).
func Start(p Policy, s Spec) (*Process, error) { return defaultServers.Start(p, s) }

// Close ends the servers, each once the commands it started were waited
// for; Start fails after Close.
func (ss *Servers) Close() {
	ss.mu.Lock()
	ss.closed = true
	m := ss.m
	ss.m = nil
	ss.mu.Unlock()
	for _, srv := range m {
		srv.retire()
	}
}

var errServersClosed = errors.New("sandbox: the servers were closed")

// Spec is one command for [Start].
type Spec struct {
	// Argv is the command and its arguments; Argv[0] is looked up in the
	// daemon's PATH when it has no slash, as [os/exec.Command] does.
	Argv []string
	// Dir is the working directory ("" is the daemon's).
	Dir string
	// Env is the environment (nil is the daemon's).
	Env []string
	// Stdin, Stdout and Stderr are the command's; nil is /dev/null.
	Stdin, Stdout, Stderr *os.File
}

// Process is a command [Start] started. It leads a new process group whose
// id is its pid, as [internal/procgroup.Isolate] arranges for unsandboxed
// commands, so the caller signals and guards it the same way.
type Process struct {
	// Pid is the command's process id (and its process group's).
	Pid int

	wait func() (syscall.WaitStatus, error)
}

// Wait waits for the command to end and reports how it did. The command
// is not reaped before Wait is called: until then its pid (and process
// group id) cannot name another process, so the caller may guard the group
// first. Call Wait once.
func (p *Process) Wait() (syscall.WaitStatus, error) { return p.wait() }

// errServerGone reports a sandbox server that ended before the command did.
var errServerGone = errors.New("sandbox: the sandbox server ended before the command did")
