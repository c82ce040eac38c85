// Command dshd is the Agent Client Protocol agent daemon an editor
// launches over stdio. It wires the built-in agent loop (package model)
// over a model provider to the bridge, the first-party tools and MCP,
// reads the settings files and applies their changes live.
//
// An editor runs it as its agent command; by hand, one session on the
// embedded demo script and with a model look like this:
//
//	dshd                                       # ACP on stdin/stdout, the embedded demo script
//	dshd auth                                  # set up a model provider once
//	dshd --provider openai --model qwen3 --base-url http://localhost:11434/v1
//
// stdout carries only the protocol: the real stdout is kept for the
// connection and os.Stdout is pointed at stderr, so a stray print cannot
// corrupt the stream. Logs go to stderr through log/slog. The daemon waits
// for the editor in Go's network poller, not in a blocking read(2) that
// would hold one of the runtime's Ps: a pipe is opened again as the
// daemon's own non-blocking description, a socket is set non-blocking
// until exit (editorStdio in stdio_unix.go says why and how).
//
// Run `dshd --help` for the flags and the environment variables that stand
// in for them.
package main
