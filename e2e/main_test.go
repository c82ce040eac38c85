package e2e

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Binaries built once by TestMain.
var (
	dshdBin string // the real daemon
	echoBin string // the bare JSON echo, the benchmarks' floor
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "dshd-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	dshdBin = filepath.Join(dir, "dshd")
	echoBin = filepath.Join(dir, "echo")
	race := os.Getenv("DSHD_E2E_RACE") == "1"
	if err := goBuild(root, dshdBin, "./cmd/dshd", race); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building dshd:", err)
		return 1
	}
	if err := goBuild(root, echoBin, "./e2e/internal/echo", false); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the echo:", err)
		return 1
	}
	return m.Run()
}

// goBuild builds pkg of the module at root into out with the go command
// that runs the tests.
func goBuild(root, out, pkg string, race bool) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	args := []string{"build"}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command(goCmd, append(args, "-o", out, pkg)...)
	cmd.Dir = root
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// moduleRoot walks up from the working directory (the package directory
// under go test) to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
