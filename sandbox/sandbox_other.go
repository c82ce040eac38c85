//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

var errUnsupported = errors.New("the OS sandbox is not available on " + runtime.GOOS + " yet")

func probe(string, error) Availability {
	return Availability{Reason: errUnsupported.Error()}
}

func quickProbe(error) Availability { return probe("", nil) }

// probeKey: there is nothing to remember where there is no sandbox.
func probeKey(string) (string, bool) { return "", false }

// Start fails on this system: there is no sandbox to run a command in.
func (*Servers) Start(Policy, Spec) (*Process, error) {
	return nil, errUnsupported
}

type server struct{}

func (*server) retire() {}

func launch(string, Policy, bool, bool, []string) int {
	fmt.Fprintf(os.Stderr, "dshd sandbox: %v\n", errUnsupported)
	return exitSetup
}
