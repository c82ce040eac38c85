//go:build linux

package sandbox_test

import (
	"os/exec"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

// BenchmarkStart measures what the launcher adds to a command's start:
// `true` run directly and under each way of sandboxing it, in one run.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	ws := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
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
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name != "direct" {
				requireSandbox(b)
			}
			for b.Loop() {
				if err := c.cmd().Run(); err != nil {
					b.Fatal(err)
				}
			}
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
