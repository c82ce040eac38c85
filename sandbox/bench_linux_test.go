//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// BenchmarkStart measures what the launcher adds to a command's start:
// `true` run directly and under each way of sandboxing it, in one run,
// with the dshd binary as the launcher.
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
		cmd  func() *exec.Cmd
	}{
		{"direct", func() *exec.Cmd { return exec.Command("true") }},
		{"sandboxed", sandboxed(b, ws)},
		{"sandboxed-no-network", sandboxed(b, noNet)},
		{"sandboxed-read-only", sandboxed(b, ro)},
		{"terminal-wrap", wrapped(b, ws)},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name != "direct" {
				requireSandbox(b)
			}
			// CPU time of the command and what it waited for: on a
			// loaded machine wall time mostly measures the queue for a
			// core, which a launcher's threads join more often.
			var cpu time.Duration
			for b.Loop() {
				cmd := c.cmd()
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func sandboxed(b *testing.B, p sandbox.Policy) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd, err := sandbox.Command(p, []string{"true"})
		if err != nil {
			b.Fatal(err)
		}
		cmd.Dir = p.WritableRoots[0]
		return cmd
	}
}

// wrapped is how an editor terminal starts a command: the launcher's
// outer stage, which enters the namespaces itself.
func wrapped(b *testing.B, p sandbox.Policy) func() *exec.Cmd {
	return func() *exec.Cmd {
		argv, err := sandbox.Wrap(p, []string{"true"})
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = p.WritableRoots[0]
		return cmd
	}
}
