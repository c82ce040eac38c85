// Package host defines what a running tool may ask of the session that runs
// it (roots, file access, editor terminals, live progress, the plan). The
// bridge implements [Host]; tools read it from their context. It exists so
// that tools and the bridge meet without depending on each other.
package host
