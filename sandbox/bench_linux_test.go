//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/sandbox"
)

// dshdLauncher builds dshd once and makes it the launcher: what a
// command's start costs is the real binary's, not this test binary's.
var dshdLauncher = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "dshd-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "dshd")
	return bin, testsupport.GoBuild(bin, "./cmd/dshd", false)
})

// BenchmarkStart measures what the sandbox adds to a command's start:
// `true` run directly and under each way of sandboxing it, in one run,
// with the dshd binary as the launcher. "sandboxed" is a command the
// daemon starts (its policy's sandbox server already running),
// "sandboxed-first" the first command of a policy (which starts the
// server), "terminal-wrap" a command an editor terminal starts through
// the launcher.
func BenchmarkStart(b *testing.B) {
	bin, err := dshdLauncher()
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(bin))
	sandbox.SetLauncher(bin)
	defer sandbox.RunIfLauncher() // back to this test binary
	dir := b.TempDir()
	ws := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir},
		Protected: []string{filepath.Join(dir, ".git"), filepath.Join(dir, ".dshd")}}
	noNet := ws
	noNet.Network = false
	ro := ws
	ro.Mode = sandbox.ModeReadOnly
	for _, c := range []struct {
		name string
		run  func(b *testing.B)
	}{
		{"direct", func(b *testing.B) { runCmd(b, exec.Command("true")) }},
		{"sandboxed", started(ws, dir)},
		{"sandboxed-no-network", started(noNet, dir)},
		{"sandboxed-read-only", started(ro, dir)},
		{"sandboxed-first", func(b *testing.B) {
			// A policy no server runs for yet: a root of its own.
			root, err := os.MkdirTemp(dir, "first-")
			if err != nil {
				b.Fatal(err)
			}
			p := ws
			p.WritableRoots = []string{root}
			started(p, root)(b)
		}},
		{"terminal-wrap", wrapped(ws)},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name != "direct" {
				requireSandbox(b)
			}
			for b.Loop() {
				c.run(b)
			}
		})
	}
}

func runCmd(b *testing.B, cmd *exec.Cmd) {
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
}

func started(p sandbox.Policy, dir string) func(b *testing.B) {
	return func(b *testing.B) {
		proc, err := sandbox.Start(p, sandbox.Spec{Argv: []string{"true"}, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if ws, err := proc.Wait(); err != nil || ws.ExitStatus() != 0 {
			b.Fatalf("true: %v, %v", ws, err)
		}
	}
}

// wrapped is how an editor terminal starts a command: the launcher's
// outer stage, which enters the namespaces itself.
func wrapped(p sandbox.Policy) func(b *testing.B) {
	return func(b *testing.B) {
		argv, err := sandbox.Wrap(p, []string{"true"})
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = p.WritableRoots[0]
		runCmd(b, cmd)
	}
}
