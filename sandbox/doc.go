// Package sandbox owns the operating-system sandbox every command dshd
// starts runs in: the [Policy] (what a command may write, whether it may
// use the network, which paths stay read-only inside its writable roots)
// and the launcher that puts a command under it.
//
// The launcher is the dshd binary itself, re-executed as the hidden
// sub-command `dshd __sandbox` (see [LauncherCommand]): on Linux it enters
// new user and mount namespaces (and a network namespace with only
// loopback when the policy forbids the network) where the kernel allows
// them, bind-mounts the protected paths read-only, applies Landlock
// (github.com/landlock-lsm/go-landlock), drops its capabilities and runs
// the command. It serves in two ways:
//
//   - [Start], for the commands the daemon starts itself (bash, background
//     jobs): the launcher runs as a sandbox server, one per policy, that
//     sets the sandbox up once and forks each command from its sandboxed
//     thread. A command costs a socket round trip and a fork (about 1 ms)
//     instead of a launcher's start (about 15 ms). A server whose
//     policy's paths have changed since it set them up (a .git made, a
//     .dshd replaced) is replaced before the next command.
//   - [Wrap], for a process someone else starts (an editor terminal, a
//     stdio MCP server): the launcher's argv with the command after it.
//
// Where the kernel offers no Landlock (and on other systems) [Probe] says
// why and commands run without the sandbox, under the daemon's text
// guards. Whether the namespaces work, Probe finds out by starting the
// launcher once per process, or once per boot with [SetProbeCache].
//
// A program that uses the launcher calls [RunIfLauncher] first thing in
// main (cmd/dshd does, and so do the tests of packages that start
// sandboxed commands):
//
//	func main() {
//		sandbox.RunIfLauncher()
//		…
//		p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{root}}
//		proc, err := sandbox.Start(p, sandbox.Spec{Argv: []string{"bash", "-c", line}, Dir: root, Stdout: out, Stderr: out})
//		…
//		status, err := proc.Wait()
//	}
package sandbox
