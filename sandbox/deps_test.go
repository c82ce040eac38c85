package sandbox_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLauncherStaysLight: the launcher runs from this package's init,
// which Go runs only after every package it imports and every ready
// package whose path sorts before it. Importing net (or anything heavy)
// made every launcher start wait for a hundred other packages' inits
// (~10 ms).
func TestLauncherStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/dsh-tools/dshd/sandbox").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, heavy := range []string{"net", "net/http", "crypto/tls", "github.com/santhosh-tekuri/jsonschema/v6", "github.com/modelcontextprotocol/go-sdk/mcp"} {
		if slices.Contains(deps, heavy) {
			t.Errorf("package sandbox depends on %s", heavy)
		}
	}
}
