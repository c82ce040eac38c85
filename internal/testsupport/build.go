package testsupport

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ModuleRoot walks up from the working directory (a package directory
// under go test) to the directory holding go.mod.
func ModuleRoot() (string, error) {
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

// GoBuild builds the module's package pkg (a path relative to the module
// root, such as "./cmd/dshd") into out, with the race detector when race
// is set and with any further go build flags (-tags=…). The compiler's
// output goes to stderr.
func GoBuild(out, pkg string, race bool, flags ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	args := []string{"build"}
	if race {
		args = append(args, "-race")
	}
	args = append(args, flags...)
	cmd := exec.Command(goCmd, append(args, "-o", out, pkg)...)
	cmd.Dir = root
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// MainWithBinary is a TestMain body for tests that drive a built binary:
// it builds pkg (without the race detector) into a temporary directory,
// sets *bin to its path, runs the tests and removes the directory. It
// returns the exit code for os.Exit.
func MainWithBinary(m interface{ Run() int }, pkg string, bin *string) int {
	dir, err := os.MkdirTemp("", "dshd-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, filepath.Base(pkg))
	if err := GoBuild(*bin, pkg, false); err != nil {
		fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
		return 1
	}
	return m.Run()
}
