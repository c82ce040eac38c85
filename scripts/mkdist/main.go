// Command mkdist writes dshd's release artifacts (run by `make dist`): it
// builds cmd/dshd for the six targets of package release, reproducibly
// (-trimpath, no build id, no VCS stamp, CGO off, the version stamped with
// -ldflags -X), packs each into an archive, and writes SHA256SUMS and the
// ACP Registry manifest agent.json:
//
//	go run ./scripts/mkdist -version v1.2.3 -url https://example.org/download/v1.2.3 -out dist
//
// Every archive entry gets the time -mtime (seconds since 1970; `make
// dist` passes the commit time), so two runs on the same commit write the
// same bytes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/internal/release"
)

func main() {
	var (
		version = flag.String("version", "", "release version, vMAJOR.MINOR.PATCH (required)")
		url     = flag.String("url", "", "URL the archives will be downloadable under (required)")
		out     = flag.String("out", "dist", "output directory")
		mtime   = flag.Int64("mtime", 0, "archive entries' time, in seconds since 1970 (reproducible builds: the commit time)")
		goCmd   = flag.String("go", "go", "the go command")
		meta    release.Meta
		authors string
	)
	flag.StringVar(&meta.ID, "id", "dshd", "registry id")
	flag.StringVar(&meta.Name, "name", "dshd", "display name")
	flag.StringVar(&meta.Description, "description", "Agent Client Protocol agent daemon: a policy-checked tool pipeline, live editor cards, any OpenAI-compatible or Anthropic model", "description")
	flag.StringVar(&meta.Repository, "repository", "https://github.com/dsh-tools/dshd", "source repository URL")
	flag.StringVar(&meta.License, "license", "proprietary", "SPDX license identifier")
	flag.StringVar(&authors, "authors", "dshd maintainers", "comma-separated authors")
	flag.Parse()
	for _, a := range strings.Split(authors, ",") {
		if a = strings.TrimSpace(a); a != "" {
			meta.Authors = append(meta.Authors, a)
		}
	}
	if err := run(context.Background(), *goCmd, *version, *url, *out, time.Unix(*mtime, 0), meta); err != nil {
		fmt.Fprintln(os.Stderr, "mkdist:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, goCmd, version, url, out string, mtime time.Time, meta release.Meta) error {
	if err := release.CheckVersion(version); err != nil {
		return fmt.Errorf("VERSION: %w", err)
	}
	// Checked before building for a minute: a bad URL or id fails at once.
	if _, err := release.NewManifest(meta, version, url, nil); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mkdist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var archives []release.Archive
	for _, t := range release.Targets {
		bin := filepath.Join(tmp, t.GOOS+"-"+t.GOARCH, t.Executable())
		cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false",
			"-ldflags", "-s -w -buildid= -X main.version="+version, "-o", bin, "./cmd/dshd")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOFLAGS=")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", t.RegistryKey(), err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		a, err := release.Pack(t, version, data, mtime)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, a.Name), a.Data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s  %s\n", a.SHA256, a.Name)
		archives = append(archives, a)
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), release.SHA256Sums(archives), 0o644); err != nil {
		return err
	}
	m, err := release.NewManifest(meta, version, url, archives)
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "agent.json"), append(raw, '\n'), 0o644)
}
