// Command dshd is the Agent Client Protocol agent daemon an editor
// launches over stdio. It wires the built-in agent loop (package model)
// over a model provider to the bridge, the first-party tools and MCP,
// reads the settings files and applies their changes live.
//
// stdout carries only the protocol: the real stdout is kept for the
// connection and os.Stdout is pointed at stderr, so a stray print cannot
// corrupt the stream. Logs go to stderr through log/slog.
//
// Run `dshd --help` for the flags and the environment variables that stand
// in for them.
package main
