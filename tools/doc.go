// Package tools owns dshd's first-party tools (read, write, edit, glob,
// grep, bash, bash_output, bash_kill, todo) as registry definitions, the
// plain functions behind them (bounded reading, atomic edits, .gitignore-aware
// walking, a process-group executor and a background job table). Root
// confinement and protected paths are the policy package's
// (policy.Confine, policy.Protected): the bridge turns them into guards
// before any tool body runs.
//
// Tools reach their session through [host.From]; they never import the
// bridge.
package tools
