// Package tools owns dshd's first-party tools (read, write, edit, glob,
// grep, bash, bash_output, bash_kill, todo) as registry definitions, the
// plain functions behind them (bounded reading, atomic edits, .gitignore-aware
// walking, a process-group executor and a background job table, capped
// per session). Root confinement and protected paths are the policy
// package's (policy.LandIn, policy.Protected): the bridge turns them into
// listeners and guards before any tool body runs. A file tool never opens
// a path it derived from its arguments: it asks its host for the landing
// the policy judged ([host.Host.Land]) and opens that, beneath its root.
//
// The daemon registers them all at once; an embedder may pick:
//
//	reg := registry.New()
//	err := reg.SetGlobal(tools.Builtin(tools.Options{})...)
//	// or use a function directly:
//	out, n, err := tools.ApplyEdits(text, []tools.Edit{{Old: "a := 1", New: "x := 1"}})
//
// Tools reach their session through the call ([registry.Call.Host]); they
// never import the bridge.
package tools
