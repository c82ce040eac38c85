package registry_test

import (
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// The README's tool-definition snippet is Example_tool's body.
func TestREADMEToolSnippet(t *testing.T) {
	testsupport.CheckREADMESnippet(t, "registry/example_test.go", "Example_tool")
}
