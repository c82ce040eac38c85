// Command dshd-demo shows dshd at work without an editor: it starts the
// given dshd binary on the embedded demo script in a scratch directory,
// runs one real ACP session against it over the process's pipes, answers
// every permission request with "allow once", and prints a readable
// transcript: the agent's messages and thoughts, each tool call with its
// card (title, kind, status, diff hunks, terminal output), the plan, and
// the permissions asked and answered.
//
//	go run ./cmd/dshd-demo --dshd bin/dshd
//
// It exits non-zero when the protocol fails (an error response, a
// malformed message, a turn that does not end with end_turn).
package main
