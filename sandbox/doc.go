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
// (github.com/landlock-lsm/go-landlock), drops its capabilities and execs
// the command. The same argv serves a command the daemon starts ([Command])
// and one an editor terminal starts ([Wrap]). Where the kernel offers no
// Landlock (and on other systems) [Probe] says why and commands run
// without the sandbox, under the daemon's text guards.
//
// A program that uses the launcher calls [RunIfLauncher] first thing in
// main (cmd/dshd does, and so do the tests of packages that start
// sandboxed commands):
//
//	func main() {
//		sandbox.RunIfLauncher()
//		…
//		cmd, err := sandbox.Command(sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite,
//			Network: true, WritableRoots: []string{root}}, []string{"bash", "-c", line})
//	}
package sandbox
