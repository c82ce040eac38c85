package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// Binaries built once by TestMain.
var (
	dshdBin string // the real daemon
	echoBin string // the bare JSON echo, the benchmarks' floor
	// echoJSONSchemaBin is the echo linking the validation library, the
	// floor of start-up for any binary that links it.
	echoJSONSchemaBin string
	// echoDepsBin is the echo linking everything dshd links from outside
	// the module: the floor of start-up with dshd's dependencies.
	echoDepsBin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dshd-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	dshdBin = filepath.Join(dir, "dshd")
	echoBin = filepath.Join(dir, "echo")
	echoJSONSchemaBin = filepath.Join(dir, "echo-jsonschema")
	echoDepsBin = filepath.Join(dir, "echo-deps")
	race := os.Getenv("DSHD_E2E_RACE") == "1"
	if err := testsupport.GoBuild(dshdBin, "./cmd/dshd", race); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building dshd:", err)
		return 1
	}
	if err := testsupport.GoBuild(echoBin, "./e2e/internal/echo", false); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the echo:", err)
		return 1
	}
	if err := testsupport.GoBuild(echoJSONSchemaBin, "./e2e/internal/echo", false, "-tags=jsonschema"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the echo with jsonschema:", err)
		return 1
	}
	if err := testsupport.GoBuild(echoDepsBin, "./e2e/internal/echo", false, echoDepsTags); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the echo with dshd's dependencies:", err)
		return 1
	}
	return m.Run()
}

// goBuild builds pkg of the module at root into out with the go command
// that runs the tests.
