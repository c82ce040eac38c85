//go:build linux

package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/sandbox"
)

// sandboxHost is a fake host whose commands run in the OS sandbox.
type sandboxHost struct {
	*fakeHost
	policy sandbox.Policy
	err    error
}

func (h *sandboxHost) Sandbox() (sandbox.Policy, bool, error) {
	return h.policy, h.err == nil && h.policy.Mode != sandbox.ModeOff, h.err
}

func (h *sandboxHost) SandboxServers() *sandbox.Servers { return nil }

func requireSandbox(t *testing.T) {
	t.Helper()
	a := sandbox.Probe()
	if a.Available() && a.Namespaces {
		return
	}
	if os.Getenv("DSHD_SANDBOX_TESTS") == "skip" {
		t.Skipf("sandbox unavailable and DSHD_SANDBOX_TESTS=skip: %s", a.Reason)
	}
	t.Fatalf("the sandbox cannot run here (%s); set DSHD_SANDBOX_TESTS=skip on a machine without it", a.Reason)
}

// outsideDir is a directory outside the workspace and outside the temp
// directories, which sandboxed commands may write.
func outsideDir(t *testing.T) string { return testsupport.OutsideSandbox(t) }

func sandboxHarness(t *testing.T, mode sandbox.Mode, opts Options) (*harness, string) {
	requireSandbox(t)
	cwd := t.TempDir()
	hs := newHarness(t, cwd, opts)
	sh := &sandboxHost{fakeHost: hs.h, policy: sandbox.Policy{Mode: mode, Network: true, WritableRoots: []string{cwd},
		Protected: []string{filepath.Join(cwd, ".git"), filepath.Join(cwd, ".dshd")}}}
	hs.host = sh
	return hs, cwd
}

func TestBashIsSandboxedAndSaysSo(t *testing.T) {
	hs, cwd := sandboxHarness(t, sandbox.ModeWorkspaceWrite, Options{})
	out := outsideDir(t)
	victim := filepath.Join(out, "victim")
	r := hs.run("bash", BashArgs{Command: "echo inside > made && echo pwned > " + victim})
	if _, err := os.Stat(victim); err == nil {
		t.Fatalf("a sandboxed command wrote outside the workspace: %s", text(r))
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "made")); err != nil || string(b) != "inside\n" {
		t.Fatalf("the workspace write failed: %v %q", err, b)
	}
	if got := text(r); !strings.Contains(got, "OS sandbox") || !strings.Contains(got, "escalate: true") {
		t.Errorf("the result does not name the sandbox and the way out:\n%s", got)
	}
	// A command failing for another reason gets no such note.
	if got := text(hs.run("bash", BashArgs{Command: "exit 3"})); strings.Contains(got, "sandbox") {
		t.Errorf("note on an ordinary failure: %s", got)
	}
}

func TestBashEscalatedRunsUnsandboxed(t *testing.T) {
	hs, _ := sandboxHarness(t, sandbox.ModeReadOnly, Options{})
	out := outsideDir(t)
	victim := filepath.Join(out, "allowed")
	yes, why := true, "writes the cache the user asked for"
	r := hs.run("bash", BashArgs{Command: "echo ok > " + victim, Escalate: &yes, Justification: &why})
	if b, err := os.ReadFile(victim); err != nil || string(b) != "ok\n" {
		t.Fatalf("escalated command did not run outside the sandbox: %v %s", err, text(r))
	}
	subj := hs.defs["bash"].Subjects(hs.call("bash", BashArgs{Command: "x", Escalate: &yes, Justification: &why}))
	if len(subj) != 1 || !subj[0].Unsandboxed || subj[0].Justification != why {
		t.Errorf("subjects = %+v", subj)
	}
}

func TestBashRequiredSandboxRefuses(t *testing.T) {
	hs, cwd := sandboxHarness(t, sandbox.ModeWorkspaceWrite, Options{})
	hs.host = &sandboxHost{fakeHost: hs.h, err: errors.New("sandbox.required is set and Landlock is missing")}
	r := hs.run("bash", BashArgs{Command: "touch made"})
	if !r.IsError || !strings.Contains(text(r), "sandbox.required") {
		t.Errorf("result = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made")); err == nil {
		t.Error("the command ran")
	}
}

func TestBackgroundJobIsSandboxed(t *testing.T) {
	js := NewJobs(0)
	defer js.Close()
	hs, _ := sandboxHarness(t, sandbox.ModeWorkspaceWrite, Options{Jobs: js})
	out := outsideDir(t)
	victim := filepath.Join(out, "victim")
	bg := true
	r := hs.run("bash", BashArgs{Command: "echo pwned > " + victim + "; echo $?", RunInBackground: &bg})
	id := strings.Fields(strings.TrimPrefix(text(r), "Started in the background with id "))[0]
	id = strings.TrimSuffix(id, ".")
	if ended, err := js.Wait(context.Background(), "sess-1", id, 30*time.Second); err != nil || !ended {
		t.Fatalf("wait %s: %v %v", id, ended, err)
	}
	st, _ := js.Read("sess-1", id)
	if _, err := os.Stat(victim); err == nil {
		t.Fatalf("a background command wrote outside the workspace: %+v", st)
	}
	if !strings.Contains(st.Output, "1") {
		t.Errorf("output %q", st.Output)
	}
	// A background command failing on a denial says it was the sandbox.
	r = hs.run("bash", BashArgs{Command: "echo pwned > " + victim, RunInBackground: &bg})
	id = strings.TrimSuffix(strings.Fields(strings.TrimPrefix(text(r), "Started in the background with id "))[0], ".")
	wait := 30
	if got := text(hs.run("bash_output", BashOutputArgs{ID: id, Wait: &wait})); !strings.Contains(got, "OS sandbox") || !strings.Contains(got, "escalate") {
		t.Errorf("bash_output of a denied background command:\n%s", got)
	}
}

// The process group and its watchdog work through the launcher: a
// cancelled sandboxed command dies with everything it started.
func TestSandboxedRunCancelKillsGroup(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: false, WritableRoots: []string{dir}}
	cancelKillsGroup(t, Command{Line: "ps -o pgid= $$; sleep 60 & (sleep 60; echo never) & sleep 60; wait", Dir: dir, Sandbox: p})
}
