package e2e

import (
	"slices"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// echoDepsTags are the build tags of the echo that links what dshd links
// from outside the module (BenchmarkStartup's echo-deps).
const echoDepsTags = "-tags=jsonschema,deps"

// TestDepsEchoLinksDshdsDependencies keeps echo-deps the floor it claims
// to be: it imports every package from outside the module that dshd's own
// packages import, so a dependency added to dshd without it shows here,
// not as start-up dshd seems to lose against its floor.
func TestDepsEchoLinksDshdsDependencies(t *testing.T) {
	dshd, err := testsupport.OutsideImports("./cmd/dshd")
	if err != nil {
		t.Fatal(err)
	}
	echo, err := testsupport.OutsideImports("./e2e/internal/echo", echoDepsTags)
	if err != nil {
		t.Fatal(err)
	}
	if len(dshd) == 0 {
		t.Fatal("dshd imports nothing from outside the module: the listing is wrong")
	}
	for _, p := range dshd {
		if !slices.Contains(echo, p) {
			t.Errorf("dshd imports %s, the echo-deps floor does not: add it to e2e/internal/echo/deps.go", p)
		}
	}
	for _, p := range echo {
		if !slices.Contains(dshd, p) {
			t.Errorf("the echo-deps floor imports %s, which dshd no longer does: remove it from e2e/internal/echo", p)
		}
	}
}
