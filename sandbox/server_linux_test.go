//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

// TestServerProtectsPathsThatChangeAfterItStarted: a server is set up
// against its policy's paths as they were; a .git that appears later, or
// a .dshd replaced from outside the sandbox, must be as protected as if
// the server had just started.
func TestServerProtectsPathsThatChangeAfterItStarted(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	git, dshd := filepath.Join(root, ".git"), filepath.Join(root, ".dshd")
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{root},
		Protected: []string{git, dshd}}
	// No .git yet: the command may create one, as `git init` would.
	if r := run(t, p, root, `mkdir .git && echo '[core]' > .git/config`, viaServer); r.code != 0 {
		t.Fatalf("creating .git: exit %d: %s", r.code, r.out)
	}
	if r := run(t, p, root, `echo pwned >> .git/config; mkdir -p .git/hooks && echo pwned > .git/hooks/pre-commit`, viaServer); r.code == 0 {
		t.Errorf("a .git created by an earlier command stayed writable: %s", r.out)
	}
	if b, _ := os.ReadFile(filepath.Join(git, "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config is now %q", b)
	}
	// .dshd replaced by the user (outside the sandbox) after the server
	// set the old one up.
	if err := os.RemoveAll(dshd); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dshd, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dshd, "settings.json")
	if err := os.WriteFile(settings, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, p, root, `echo pwned > .dshd/settings.json`, viaServer); r.code == 0 {
		t.Errorf("a replaced .dshd was writable: %s", r.out)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
		t.Errorf("settings.json is now %q", b)
	}
}

// TestServerRunsCommandsConcurrently: commands through one server keep
// their own output, exit status, process group and end.
func TestServerRunsCommandsConcurrently(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := os.Create(filepath.Join(dir, fmt.Sprintf("out%d", i)))
			if err != nil {
				t.Error(err)
				return
			}
			defer out.Close()
			line := fmt.Sprintf(`echo "n=%d pgid=$(ps -o pgid= $$ | tr -d " ")"; exit %d`, i, i)
			if i == 7 {
				line = `kill -KILL $$`
			}
			proc, err := sandbox.Start(p, sandbox.Spec{Argv: []string{"bash", "-c", line}, Dir: dir, Stdout: out, Stderr: out})
			if err != nil {
				t.Error(err)
				return
			}
			ws, err := proc.Wait()
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := os.ReadFile(out.Name())
			if i == 7 {
				if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Errorf("command %d: status %v, want killed by SIGKILL", i, ws)
				}
				return
			}
			if ws.ExitStatus() != i {
				t.Errorf("command %d: exit %d", i, ws.ExitStatus())
			}
			want := fmt.Sprintf("n=%d pgid=%d", i, proc.Pid)
			if got := strings.Join(strings.Fields(string(b)), " "); got != want {
				t.Errorf("command %d printed %q, want %q (its own process group)", i, got, want)
			}
		}()
	}
	wg.Wait()
}

// TestServerIsReplacedWhenItDies: a server killed (by a command, the OOM
// killer, a user) costs the next command nothing but a new server.
func TestServerIsReplacedWhenItDies(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: false, WritableRoots: []string{dir}}
	if r := run(t, p, dir, "true", viaServer); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.out)
	}
	for _, pid := range sandbox.ServerPIDs() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if r := run(t, p, dir, "echo again", viaServer); r.code != 0 || r.out != "again\n" {
		t.Fatalf("after the server died: exit %d: %q", r.code, r.out)
	}
}

// TestServerWaitsForTheCaller: a command that ends at once is not reaped
// before Wait, so its pid still names its process group when the caller
// guards it.
func TestServerWaitsForTheCaller(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: true}
	proc, err := sandbox.Start(p, sandbox.Spec{Argv: []string{"true"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A zombie until Wait: its process group id is still its pid.
	if pgid, err := syscall.Getpgid(proc.Pid); err != nil || pgid != proc.Pid {
		t.Errorf("getpgid(%d) = %d, %v before Wait", proc.Pid, pgid, err)
	}
	if ws, err := proc.Wait(); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("Wait = %v, %v", ws, err)
	}
}

// TestServersCloseAfterTheirLastCommand: closing a session's servers
// lets its running commands finish and report, then ends the servers.
func TestServersCloseAfterTheirLastCommand(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	var ss sandbox.Servers
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	proc, err := ss.Start(p, sandbox.Spec{Argv: []string{"bash", "-c", "read -r line; exit 7"}, Dir: dir, Stdin: in})
	if err != nil {
		t.Fatal(err)
	}
	exited := ss.Exited()
	if len(exited) != 1 {
		t.Fatalf("%d servers, want 1", len(exited))
	}
	ss.Close()
	if _, err := ss.Start(p, sandbox.Spec{Argv: []string{"true"}, Dir: dir}); err == nil {
		t.Error("Start after Close succeeded")
	}
	select {
	case <-exited[0]:
		t.Fatal("the server ended before its command did")
	default:
	}
	feed.WriteString("go on\n")
	feed.Close()
	if ws, err := proc.Wait(); err != nil || ws.ExitStatus() != 7 {
		t.Fatalf("Wait = %v, %v; want exit 7", ws, err)
	}
	<-exited[0] // the test's deadline fails it if the server never ends
}

// TestServersKeepFewIdle: a session that ran commands under many policies
// keeps at most eight idle servers, the least recently used ended first.
func TestServersKeepFewIdle(t *testing.T) {
	requireSandbox(t)
	var ss sandbox.Servers
	defer ss.Close()
	for i := range 10 {
		dir := t.TempDir()
		p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
		proc, err := ss.Start(p, sandbox.Spec{Argv: []string{"true"}, Dir: dir})
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		if _, err := proc.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ss.Exited()); n != 8 {
		t.Errorf("%d servers kept, want 8", n)
	}
}
