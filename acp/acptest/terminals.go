package acptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/acp"
)

// Terminals serves the terminal/* methods.
type Terminals interface {
	Create(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error)
	Output(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error)
	WaitForExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error)
	Kill(ctx context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error)
	Release(ctx context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error)
}

// terminal is one terminal's state: output (bounded), exit status, lifecycle.
type terminal struct {
	mu        sync.Mutex
	output    []byte
	truncated bool
	limit     uint64 // 0 = unlimited
	done      chan struct{}
	exit      acp.TerminalExitStatus
	kill      func()
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.output = append(t.output, p...)
	if t.limit > 0 && uint64(len(t.output)) > t.limit {
		// Drop from the start, cutting at a character boundary.
		cut := len(t.output) - int(t.limit)
		for cut < len(t.output) && !utf8.RuneStart(t.output[cut]) {
			cut++
		}
		t.output = append([]byte(nil), t.output[cut:]...)
		t.truncated = true
	}
	return len(p), nil
}

// terminalTable is the bookkeeping shared by the real and the fake implementation.
type terminalTable struct {
	mu       sync.Mutex
	next     int
	live     map[string]*terminal
	created  []string
	released []string
}

func (tt *terminalTable) add(t *terminal) string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.live == nil {
		tt.live = map[string]*terminal{}
	}
	tt.next++
	id := "term-" + strconv.Itoa(tt.next)
	tt.live[id] = t
	tt.created = append(tt.created, id)
	return id
}

func (tt *terminalTable) get(id string) (*terminal, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	t := tt.live[id]
	if t == nil {
		return nil, fmt.Errorf("%w: unknown or released terminal %q", acp.ErrInvalidParams, id)
	}
	return t, nil
}

// Created returns the ids of all terminals created, in order.
func (tt *terminalTable) Created() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.created...)
}

// Released returns the ids of all terminals released, in order.
func (tt *terminalTable) Released() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.released...)
}

// Output implements [Terminals].
func (tt *terminalTable) Output(_ context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	t, err := tt.get(req.TerminalID)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	resp := &acp.TerminalOutputResponse{Output: string(t.output), Truncated: t.truncated}
	select {
	case <-t.done:
		st := t.exit
		resp.ExitStatus = &st
	default:
	}
	return resp, nil
}

// WaitForExit implements [Terminals].
func (tt *terminalTable) WaitForExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	t, err := tt.get(req.TerminalID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &acp.WaitForTerminalExitResponse{ExitCode: t.exit.ExitCode, Signal: t.exit.Signal}, nil
}

// Kill implements [Terminals].
func (tt *terminalTable) Kill(_ context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	t, err := tt.get(req.TerminalID)
	if err != nil {
		return nil, err
	}
	t.kill()
	return &acp.KillTerminalResponse{}, nil
}

// Release implements [Terminals].
func (tt *terminalTable) Release(_ context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	t, err := tt.get(req.TerminalID)
	if err != nil {
		return nil, err
	}
	t.kill()
	tt.mu.Lock()
	delete(tt.live, req.TerminalID)
	tt.released = append(tt.released, req.TerminalID)
	tt.mu.Unlock()
	return &acp.ReleaseTerminalResponse{}, nil
}

// ExecTerminals runs real local processes (stdout and stderr merged, no stdin).
type ExecTerminals struct{ terminalTable }

// Create implements [Terminals].
func (e *ExecTerminals) Create(_ context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	t := &terminal{done: make(chan struct{})}
	if req.OutputByteLimit != nil {
		t.limit = *req.OutputByteLimit
	}
	cmd := exec.Command(req.Command, req.Args...)
	cmd.Stdout, cmd.Stderr = t, t
	if req.Cwd != nil {
		cmd.Dir = *req.Cwd
	}
	cmd.Env = os.Environ()
	for _, v := range req.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("terminal/create %s: %w", req.Command, err)
	}
	var once sync.Once
	t.kill = func() {
		once.Do(func() {
			select {
			case <-t.done:
			default:
				_ = cmd.Process.Kill()
			}
		})
	}
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		var exitErr *exec.ExitError
		switch {
		case err == nil:
			t.exit.ExitCode = acp.Ptr(uint32(0))
		case errors.As(err, &exitErr):
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.exit.Signal = acp.Ptr(ws.Signal().String())
			} else {
				t.exit.ExitCode = acp.Ptr(uint32(exitErr.ExitCode()))
			}
		}
		t.mu.Unlock()
		close(t.done)
	}()
	return &acp.CreateTerminalResponse{TerminalID: e.add(t)}, nil
}

// FakeRun scripts one fake command.
type FakeRun struct {
	Output   string
	ExitCode uint32
	// Hang keeps the command running until it is killed or released (then Signal "SIGKILL").
	Hang bool
	// Runs makes the command run for this long (on the test's clock, so a
	// testing/synctest bubble makes it instant) and print Output when it
	// ends, like "sleep 6; echo six-done". Killing it earlier ends it with
	// no output and Signal "SIGKILL".
	Runs time.Duration
}

// FakeTerminals serves terminals from a script keyed by command name; unknown commands exit
// with 127 and "command not found".
type FakeTerminals struct {
	terminalTable
	Script map[string]FakeRun
}

// Create implements [Terminals].
func (f *FakeTerminals) Create(_ context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	t := &terminal{done: make(chan struct{})}
	if req.OutputByteLimit != nil {
		t.limit = *req.OutputByteLimit
	}
	run, ok := f.Script[req.Command]
	if !ok {
		run = FakeRun{Output: req.Command + ": command not found\n", ExitCode: 127}
	}
	if run.Runs <= 0 {
		_, _ = t.Write([]byte(run.Output))
	}
	var once sync.Once
	finish := func(st acp.TerminalExitStatus) {
		once.Do(func() {
			t.mu.Lock()
			t.exit = st
			t.mu.Unlock()
			close(t.done)
		})
	}
	t.kill = func() { finish(acp.TerminalExitStatus{Signal: acp.Ptr("SIGKILL")}) }
	switch {
	case run.Hang:
	case run.Runs > 0:
		timer := time.AfterFunc(run.Runs, func() {
			once.Do(func() {
				_, _ = t.Write([]byte(run.Output))
				t.mu.Lock()
				t.exit = acp.TerminalExitStatus{ExitCode: acp.Ptr(run.ExitCode)}
				t.mu.Unlock()
				close(t.done)
			})
		})
		t.kill = func() {
			timer.Stop()
			finish(acp.TerminalExitStatus{Signal: acp.Ptr("SIGKILL")})
		}
	default:
		finish(acp.TerminalExitStatus{ExitCode: acp.Ptr(run.ExitCode)})
	}
	return &acp.CreateTerminalResponse{TerminalID: f.add(t)}, nil
}

func (c *Client) terminals(method string) (Terminals, error) {
	if c.Terminals == nil {
		return nil, fmt.Errorf("%w: %s", acp.ErrMethodNotFound, method)
	}
	return c.Terminals, nil
}

// CreateTerminal implements [acp.Client].
func (c *Client) CreateTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	t, err := c.terminals(acp.MethodTerminalCreate)
	if err != nil {
		return nil, err
	}
	return t.Create(ctx, req)
}

// TerminalOutput implements [acp.Client].
func (c *Client) TerminalOutput(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	t, err := c.terminals(acp.MethodTerminalOutput)
	if err != nil {
		return nil, err
	}
	return t.Output(ctx, req)
}

// WaitForTerminalExit implements [acp.Client].
func (c *Client) WaitForTerminalExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	t, err := c.terminals(acp.MethodTerminalWaitForExit)
	if err != nil {
		return nil, err
	}
	return t.WaitForExit(ctx, req)
}

// KillTerminal implements [acp.Client].
func (c *Client) KillTerminal(ctx context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	t, err := c.terminals(acp.MethodTerminalKill)
	if err != nil {
		return nil, err
	}
	return t.Kill(ctx, req)
}

// ReleaseTerminal implements [acp.Client].
func (c *Client) ReleaseTerminal(ctx context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	t, err := c.terminals(acp.MethodTerminalRelease)
	if err != nil {
		return nil, err
	}
	return t.Release(ctx, req)
}
