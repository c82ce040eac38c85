//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

var errUnsupported = errors.New("the OS sandbox is not available on " + runtime.GOOS + " yet")

func probe(string, error) Availability {
	return Availability{Reason: errUnsupported.Error()}
}

// Command fails on this system: there is no sandbox to run a command in.
func Command(p Policy, argv []string) (*exec.Cmd, error) {
	return nil, errUnsupported
}

func launch(string, Policy, bool, bool, []string) int {
	fmt.Fprintf(os.Stderr, "dshd sandbox: %v\n", errUnsupported)
	return exitSetup
}
