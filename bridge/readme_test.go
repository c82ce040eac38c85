package bridge_test

import (
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// The README's embedding snippet is Example_stdio's body.
func TestREADMEEmbeddingSnippet(t *testing.T) {
	testsupport.CheckREADMESnippet(t, "bridge/example_test.go", "Example_stdio")
}
