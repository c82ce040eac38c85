package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/internal/work"
)

// script is a script-provider file (model/script's format).
type script struct {
	Turns []turn `json:"turns"`
}

type turn struct {
	Match     string     `json:"match,omitempty"`
	Responses []response `json:"responses"`
}

type response struct {
	DelayMs    int        `json:"delayMs,omitempty"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []toolCall `json:"toolCalls,omitempty"`
	StopReason string     `json:"stopReason,omitempty"`
}

type toolCall struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Arguments    any    `json:"arguments,omitempty"`
	RawArguments string `json:"rawArguments,omitempty"`
}

// calls returns n calls of the same tool with the same arguments.
func calls(prefix string, n int, name string, args any) []toolCall {
	out := make([]toolCall, n)
	for i := range out {
		out[i] = toolCall{ID: fmt.Sprintf("%s%d", prefix, i), Name: name, Arguments: args}
	}
	return out
}

// fixture is one isolated daemon environment: a project directory (the
// sessions' cwd and the daemon's working directory), a state directory, a
// home with empty XDG directories, and a script.
type fixture struct {
	dir    string
	ws     string // the project: the daemon's and the sessions' cwd
	state  string // --state-dir
	home   string
	script string // --script
	config string // --config, when set
}

func newFixture(t testing.TB, s script) *fixture {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f := &fixture{
		dir:    dir,
		ws:     filepath.Join(dir, "ws"),
		state:  filepath.Join(dir, "state"),
		home:   filepath.Join(dir, "home"),
		script: filepath.Join(dir, "script.json"),
	}
	for _, d := range []string{f.ws, f.state, f.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.writeScript(t, s)
	return f
}

func (f *fixture) writeScript(t testing.TB, s script) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.script, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withConfig writes settings to a --config file of the fixture.
func (f *fixture) withConfig(t testing.TB, settings string) {
	t.Helper()
	f.config = filepath.Join(f.dir, "settings.json")
	if err := os.WriteFile(f.config, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) env() []string {
	env := []string{
		"HOME=" + f.home,
		"XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(f.home, ".state"),
		"PATH=" + os.Getenv("PATH"),
		"LANG=C",
	}
	// GORACE tunes a race-enabled daemon; DSHD_CPUPROFILE and
	// DSHD_MEMPROFILE profile it
	// (for taking the benchmarks apart).
	for _, k := range []string{"GORACE", "GODEBUG", "DSHD_CPUPROFILE", "DSHD_MEMPROFILE"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// args are the daemon's arguments on the fixture.
func (f *fixture) args() []string {
	args := []string{"--provider", "script", "--script", f.script, "--state-dir", f.state, "--log-level", "warn"}
	if f.config != "" {
		args = append(args, "--config", f.config)
	}
	return args
}

// start spawns the daemon on the fixture.
func (f *fixture) start(t testing.TB) *proc {
	t.Helper()
	return startProc(t, dshdBin, f.ws, f.env(), f.args()...)
}

// proc is a spawned process with its stdio pipes.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *testsupport.SyncBuffer
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's error, valid after exited
}

func startProc(t testing.TB, bin, dir string, env []string, args ...string) *proc {
	t.Helper()
	p, err := spawn(bin, dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			if s := p.stderr.String(); s != "" {
				t.Logf("stderr of %s (pid %d):\n%s", filepath.Base(bin), p.pid(), s)
			}
		}
	})
	return p
}

func spawn(bin, dir string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	// Its own process group, as editors start agents.
	cmd.SysProcAttr = ownProcessGroup()
	p := &proc{cmd: cmd, stderr: &testsupport.SyncBuffer{Limit: 4 << 20}, exited: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL (if the process still runs) and waits for it.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	if os.Getenv("DSHD_CPUPROFILE") != "" || os.Getenv("DSHD_MEMPROFILE") != "" {
		// A profiled daemon writes its profile when the editor goes away:
		// let it, then kill it all the same if it lingers.
		_ = p.stdin.Close()
		if p.waitExit(10 * time.Second) {
			return
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// waitExit reports whether the process exited within d.
func (p *proc) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// rwc is the client's side of the process's stdio.
func (p *proc) rwc() io.ReadWriteCloser { return acp.Stdio(p.stdout, p.stdin) }

// client connects an acptest client to the process; the connection is
// closed when the test ends.
func (p *proc) client(t testing.TB, c *acptest.Client) *acp.AgentConn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn := c.Serve(ctx, p.rwc())
	t.Cleanup(func() {
		cancel()
		_ = conn.Close()
	})
	return conn
}

// callCtx bounds every protocol call of a test: a hang fails the test with
// a message rather than timing the whole binary out.
func callCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// open initializes the connection and creates a session in cwd.
func open(t testing.TB, conn *acp.AgentConn, cwd string, caps acp.ClientCapabilities) string {
	t.Helper()
	ctx := callCtx(t, 20*time.Second)
	if _, err := conn.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &caps}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return newSession(t, conn, cwd)
}

// writeFiles writes each file (absolute path → content), making its
// directories.
func writeFiles(t testing.TB, files map[string]string) {
	t.Helper()
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newSession creates a session in cwd with no MCP servers.
func newSession(t testing.TB, conn *acp.AgentConn, cwd string) string {
	t.Helper()
	s, err := conn.NewSession(callCtx(t, 30*time.Second), &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return s.SessionID
}

// initBaseline initializes the connection and takes the daemon's stats
// baseline over it (see statsBaseline).
func initBaseline(t testing.TB, conn *acp.AgentConn) (statsReader, work.Stats) {
	t.Helper()
	initialize(t, conn)
	stats := connStats(conn)
	return stats, statsBaseline(t, stats)
}

// writeCall and bashCall are the scripted write and bash calls the attack
// turns are made of.
func writeCall(id, path string) toolCall {
	return toolCall{ID: id, Name: "write", Arguments: map[string]any{"path": path, "content": forged}}
}

func bashCall(id, command string) toolCall {
	return toolCall{ID: id, Name: "bash", Arguments: map[string]any{"command": command}}
}

func prompt(ctx context.Context, conn *acp.AgentConn, sid, text string) (*acp.PromptResponse, error) {
	return conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text(text)}})
}

func setMode(t testing.TB, conn *acp.AgentConn, sid, mode string) {
	t.Helper()
	if _, err := conn.SetSessionMode(callCtx(t, 10*time.Second), &acp.SetSessionModeRequest{SessionID: sid, ModeID: mode}); err != nil {
		t.Fatalf("session/set_mode %s: %v", mode, err)
	}
}

// toolStatuses maps each tool call id of sid's updates to its last status.
func toolStatuses(updates []acp.SessionNotification, sid string) map[string]acp.ToolCallStatus {
	out := map[string]acp.ToolCallStatus{}
	for _, n := range updates {
		if n.SessionID != sid {
			continue
		}
		switch u := n.Update.Value.(type) {
		case *acp.ToolCall:
			out[u.ToolCallID] = u.Status
		case *acp.ToolCallUpdate:
			if u.Status != nil {
				out[u.ToolCallID] = *u.Status
			} else if _, ok := out[u.ToolCallID]; !ok {
				out[u.ToolCallID] = ""
			}
		}
	}
	return out
}

// agentText concatenates sid's agent_message_chunk texts.
func agentText(updates []acp.SessionNotification, sid string) string {
	var b strings.Builder
	for _, n := range updates {
		if n.SessionID != sid {
			continue
		}
		if u, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
	}
	return b.String()
}

// /proc views of a process.

// procStatusKB reads a "Key: N kB" line of /proc/<pid>/status.
func procStatusKB(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, key)
}

// procCPU is the user and system CPU time pid has used so far
// (/proc/pid/stat, in clock ticks of 10 ms).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// fdCount is the number of open file descriptors of pid.
func fdCount(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// threadCount is the number of OS threads of pid.
func threadCount(pid int) int {
	n, err := procStatusKB(pid, "Threads")
	if err != nil {
		return -1
	}
	return int(n)
}

// snapshotTree returns every file under dir with its content (symlinks as
// "-> target"), to prove that an attack changed nothing.
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			out[rel] = "-> " + target
		case info.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
