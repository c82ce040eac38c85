package testsupport

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
//
// It also stats every file of the module that goes into the binary. go
// test caches a package's result by its test binary, which does not link
// what it builds here, and by the files the test consults: without the
// stats, a change to the daemon left `go test ./e2e` passing from the
// cache.
func GoBuild(out, pkg string, race bool, flags ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	if err := consultSources(goCmd, root, pkg, flags); err != nil {
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

// consultSources stats the source and embedded files of the module's
// packages that pkg is built from, so that go test's cache knows of them.
func consultSources(goCmd, root, pkg string, flags []string) error {
	args := append([]string{"list", "-deps"}, flags...)
	args = append(args, "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .GoFiles}}{{"\t"}}{{.}}{{end}}{{range .EmbedFiles}}{{"\t"}}{{.}}{{end}}{{"\n"}}{{end}}{{end}}`, pkg)
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	listed, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list %s: %w", pkg, err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(listed)), "\n") {
		dir, files, _ := strings.Cut(line, "\t")
		for f := range strings.SplitSeq(files, "\t") {
			if f != "" {
				_, _ = os.Stat(filepath.Join(dir, f)) // consulted: that is the point
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		_, _ = os.Stat(filepath.Join(root, f))
	}
	return nil
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

// OutsideImports lists the packages from outside the module and the
// standard library that the module's packages pkg is built from import
// directly, sorted: what a binary built from pkg links of its
// dependencies, named as the module names them.
func OutsideImports(pkg string, flags ...string) ([]string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	// Each of the module's packages: its own path, then what it imports.
	args := append([]string{"list", "-deps"}, flags...)
	args = append(args, "-f", `{{if .Module}}{{if .Module.Main}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{"\n"}}{{end}}{{end}}`, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	listed, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pkg, err)
	}
	own, imported := map[string]bool{}, map[string]bool{}
	for line := range strings.Lines(string(listed)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		own[fields[0]] = true
		for _, p := range fields[1:] {
			// A standard package's first element has no dot.
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				imported[p] = true
			}
		}
	}
	maps.DeleteFunc(imported, func(p string, _ bool) bool { return own[p] })
	return slices.Sorted(maps.Keys(imported)), nil
}
