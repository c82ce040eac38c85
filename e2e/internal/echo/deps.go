//go:build deps

package main

// Built with -tags jsonschema,deps the echo links every package from
// outside the module that dshd's own packages import (the chosen
// dependencies, and what they bring: the MCP SDK's net/http, oauth2 and
// encoding/gob, x/text for jsonschema's messages). Their package
// initialisation and the size of the binary they make is start-up no dshd
// can avoid without dropping one of them: the start-up benchmark's third
// floor. TestDepsEchoLinksDshdsDependencies keeps this list whole.
import (
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/landlock-lsm/go-landlock/landlock/syscall"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/santhosh-tekuri/jsonschema/v6/kind"
	_ "github.com/sergi/go-diff/diffmatchpatch"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "github.com/spf13/pflag"
	_ "golang.org/x/text/language"
	_ "golang.org/x/text/message"
)
