// Package policy owns the pure logic of tool-call permissions: permission
// rules written `tool` or `tool(pattern)`, rule sets evaluated with the
// precedence deny > ask > allow, the rule an allow_always or reject_always
// grant remembers, the session modes (default, acceptEdits, plan,
// bypassPermissions: [Modes] is the one table of what each does, which the
// bridge's listeners read and [Decide] combines with the rules), and what a path really names: [Resolve] (the path
// the kernel would open, symlinks and ".." included), [LandIn] (where each
// path subject of a call lands and in which root: the one landing that
// rules judge and the tool opens; a session lands through its [ResolvedRoots], which walk each root once), root confinement ([Confine]; the bridge asks, it does not refuse, before
// a path outside the roots) and
// protected paths with the directories holding them ([Protected]). These
// are the only implementations: the bridge's listeners and guards use
// them.
//
// It knows nothing of ACP or of the pipeline: the bridge turns its
// decisions into pre-execute listeners and permission requests, and the
// daemon parses settings files into [RuleSet]s with it.
//
// # Rules
//
// A rule is a tool-name glob, optionally followed by a parenthesised
// pattern over the call's policy subjects ([registry.Subject]):
//
//	read                  every call of read
//	mcp__github__*        every tool of the MCP server "github"
//	edit(src/**)          edits of files under <cwd>/src
//	bash(go test *)       `go test` with any arguments, never chained
//	bash(go test:*)       the same (the colon form is accepted)
//	bash(make build)      exactly `make build`
//	fetch(https://go.dev/*)
//
// The tool name is a glob in which `*` matches any run of characters; it
// otherwise consists of letters, digits, `_` and `-`. The pattern is
// everything between the first `(` and the final `)`, which must end the
// rule; it may itself contain parentheses. An empty pattern is an error.
//
// A rule without a pattern matches every call of its tools, whatever the
// subjects. A rule with a pattern matches subjects only, so it never
// matches a call that has none. How a pattern matches depends on the kind
// of the subject it is compared with:
//
// Path subjects. The subject path is made absolute against the session's
// working directory ([RuleSet.Cwd]) when relative, and cleaned. A pattern
// starting with `**` (`**/.env`, `**/*.go`) is unanchored: it matches the
// path wherever it is, inside the roots or not. Any other pattern is
// anchored: made absolute against the working directory when relative (so
// `src/**` means <cwd>/src/**), or against [RuleSet.Home] when it starts
// with `~/`, and cleaned. Pattern and path are then compared segment by
// segment: a segment `**` matches zero or more whole segments (so `dir/**`
// matches dir itself and everything below it), and any other segment is a
// [path.Match] pattern (`*` any run of characters except `/`, `?` one
// character, `[...]` a class, `\` escapes; a malformed segment never
// matches). Without a working directory, relative paths stay relative and
// only match relative or unanchored patterns.
//
// Command subjects. A pattern ending in ` *` or `:*` is a prefix rule: it
// matches the command made of the prefix's words followed by nothing or by
// whitespace and more words (`go test *` matches `go test` and
// `go test ./...`, never `go testify`). The pattern `*` alone matches
// every command. Any other pattern matches exactly that command (surrounding
// whitespace ignored). Runs of blanks are collapsed before prefix
// matching. A prefix rule used to allow or ask never matches a compound
// command ([Compound]: chaining, pipes, substitution, background jobs,
// redirection to a file); the exact command rule remembered for such a
// command by an allow_always still matches it exactly. Deny and ask rules
// are read the other way round: they match a command when they match the
// whole command, any of its segments ([Segments]) or any simple command it
// runs as [ResolvedCommands] spells it (unquoted, the program by its base
// name, wrappers such as env, nice, sudo and `sh -c` looked through), so
// `bash(rm *)` denies `make && rm -rf /`, `/bin/rm x` and
// `sh -c 'rm x'`. A prefix allow rule never matches a command passing a
// code-running option after its prefix (`go test -exec …`), and
// [Suggest] remembers commands that can run code of their arguments'
// choosing ([RunsCode]) exactly. Splitting a shell command is best effort:
// deny rules narrow what runs, they are not a sandbox.
//
// Path and other patterns are taken literally, spaces included; command
// patterns ignore surrounding blanks.
//
// Other subjects. The pattern is a glob in which `*` matches any run of
// characters (slashes included) and every other character stands for
// itself.
//
// # Classes
//
// A rule name starting with `@` names a class of calls instead of a tool.
// The one class is [ClassEdits], `@edits`: every call that changes files
// (write, edit, and any tool whose calls have the kind edit, delete or
// move). `@edits(src/**)` covers writes and edits of files under <cwd>/src
// alike; it is what an "Always allow" or "Always reject" answered for a
// file change remembers ([Suggest] with ClassEdits). The caller (the
// bridge) evaluates a file-changing call under its tool's name and under
// the class name and keeps the strictest verdict, so `write(…)` rules
// still apply to writes, and a deny of either kind beats an allow of
// either kind.
//
// # Precedence
//
// [RuleSet.Evaluate] looks at every rule: a call is denied if a matching
// tool-wide deny rule exists or any subject is denied; otherwise it asks
// if any tool-wide ask rule matches or any subject asks; otherwise it is
// allowed if a tool-wide allow rule matches or every subject is allowed.
package policy
