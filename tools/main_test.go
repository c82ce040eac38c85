package tools

import (
	"os"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

// TestMain lets the test binary serve as the sandbox launcher, as dshd does.
func TestMain(m *testing.M) {
	sandbox.RunIfLauncher()
	os.Exit(m.Run())
}
