//go:build jsonschema

package main

// Built with -tags jsonschema, the echo links the validation library every
// dshd binary links, whose package initialisation (it compiles the
// meta-schema of every JSON Schema draft) runs before main: the start-up
// benchmark's second floor, the least any binary with it can take.
import _ "github.com/santhosh-tekuri/jsonschema/v6"
