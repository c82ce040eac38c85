package script

import (
	_ "embed"
	"sync"
)

// DemoJSON is the built-in demo script, used when no provider is
// configured. It shows every card: a plan, a read, a write, an edit with a
// diff (which asks permission in the default mode) and a command with its
// output (in the editor's terminal when it offers one; the demo's texts
// promise no more). It works in any directory: it edits only a scratch
// file, dshd-demo.txt, that it writes first.
//
//go:embed demo.json
var DemoJSON []byte

var demo = sync.OnceValue(func() *Script {
	s, err := Parse(DemoJSON)
	if err != nil {
		panic("script: the embedded demo script is invalid: " + err.Error())
	}
	return s
})

// Demo returns the parsed demo script. Callers must not modify it.
func Demo() *Script { return demo() }
