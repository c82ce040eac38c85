package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Target is one platform a release is built for.
type Target struct{ GOOS, GOARCH string }

// Targets are the six platforms editors run on, in the registry's order.
var Targets = []Target{
	{"darwin", "arm64"}, {"darwin", "amd64"},
	{"linux", "arm64"}, {"linux", "amd64"},
	{"windows", "arm64"}, {"windows", "amd64"},
}

// RegistryKey is the target's name in the registry's distribution.binary:
// darwin-aarch64, linux-x86_64, windows-aarch64, …
func (t Target) RegistryKey() string {
	arch := t.GOARCH
	switch arch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	}
	return t.GOOS + "-" + arch
}

// Executable is the binary's name inside the archive.
func (t Target) Executable() string {
	if t.GOOS == "windows" {
		return "dshd.exe"
	}
	return "dshd"
}

// ArchiveName is the archive's file name: .zip for Windows, .tar.gz
// elsewhere.
func (t Target) ArchiveName(version string) string {
	ext := ".tar.gz"
	if t.GOOS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("dshd-%s-%s-%s%s", version, t.GOOS, t.GOARCH, ext)
}

// Archive is one packed target.
type Archive struct {
	Target Target
	Name   string
	Data   []byte
	SHA256 string // hex
}

// versionPattern is what a release version looks like: v1.2.3, with an
// optional pre-release or build suffix (v1.2.3-rc.1).
var versionPattern = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)

// CheckVersion reports a version that is not vMAJOR.MINOR.PATCH[-suffix].
func CheckVersion(v string) error {
	if !versionPattern.MatchString(v) {
		return fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, e.g. v0.3.0", v)
	}
	return nil
}

// Pack archives binary for t. mtime is every entry's time (use the
// release commit's time for reproducible archives).
func Pack(t Target, version string, binary []byte, mtime time.Time) (Archive, error) {
	if err := CheckVersion(version); err != nil {
		return Archive{}, err
	}
	var (
		data []byte
		err  error
	)
	if t.GOOS == "windows" {
		data, err = zipOne(t.Executable(), binary, mtime)
	} else {
		data, err = tarGzOne(t.Executable(), binary, mtime)
	}
	if err != nil {
		return Archive{}, fmt.Errorf("pack %s: %w", t.RegistryKey(), err)
	}
	sum := sha256.Sum256(data)
	return Archive{Target: t, Name: t.ArchiveName(version), Data: data, SHA256: hex.EncodeToString(sum[:])}, nil
}

func tarGzOne(name string, data []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	// No name, no time, OS byte "unknown": nothing of the machine that
	// packed it.
	gz.Header = gzip.Header{OS: 255}
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o755,
		Size:     int64(len(data)),
		ModTime:  mtime.UTC().Truncate(time.Second),
		Uname:    "root", Gname: "root",
		Format: tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipOne(name string, data []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate}
	// Modified, not SetModTime: the MS-DOS time alone, without the
	// extended-timestamp field, in UTC so the packer's zone leaves no trace.
	hdr.Modified = mtime.UTC().Truncate(2 * time.Second)
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256Sums is the SHA256SUMS file of archives, sorted by name, in the
// format sha256sum -c reads.
func SHA256Sums(archives []Archive) []byte {
	sorted := append([]Archive(nil), archives...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, a := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return []byte(b.String())
}

// Meta is what the registry shows about dshd.
type Meta struct {
	ID, Name, Description, Repository, License string
	Authors                                    []string
}

// Manifest is an ACP Registry agent.json. Its format is the registry's
// agent.schema.json (https://cdn.agentclientprotocol.com/registry/v1/latest/agent.schema.json,
// documented in FORMAT.md of github.com/agentclientprotocol/registry):
// id ^[a-z][a-z0-9-]*$, version MAJOR.MINOR.PATCH without a "v",
// distribution.binary keyed by darwin-aarch64 … windows-x86_64, each with
// archive (URL), cmd, optional args, env and sha256 (64 hex digits).
type Manifest struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Authors      []string     `json:"authors"`
	License      string       `json:"license"`
	Distribution Distribution `json:"distribution"`
}

// Distribution lists how the agent is installed; dshd ships binaries.
type Distribution struct {
	Binary map[string]BinaryTarget `json:"binary"`
}

// BinaryTarget is one platform's archive and how to start what it holds.
type BinaryTarget struct {
	Archive string   `json:"archive"`
	SHA256  string   `json:"sha256"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args,omitempty"`
}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// NewManifest describes archives, published under releaseURL (the
// directory the archives are downloadable from), for version.
func NewManifest(m Meta, version, releaseURL string, archives []Archive) (*Manifest, error) {
	if err := CheckVersion(version); err != nil {
		return nil, err
	}
	if !idPattern.MatchString(m.ID) {
		return nil, fmt.Errorf("agent id %q: want lower-case letters, digits and hyphens", m.ID)
	}
	if m.Name == "" || m.Description == "" || m.License == "" {
		return nil, errors.New("the manifest needs a name, a description and a license")
	}
	u, err := url.Parse(releaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("release URL %q: want an absolute https:// URL", releaseURL)
	}
	base := strings.TrimSuffix(releaseURL, "/") + "/"
	out := &Manifest{
		ID: m.ID, Name: m.Name, Version: strings.TrimPrefix(version, "v"), Description: m.Description,
		Repository: m.Repository, Authors: m.Authors, License: m.License,
		Distribution: Distribution{Binary: map[string]BinaryTarget{}},
	}
	if out.Authors == nil {
		out.Authors = []string{}
	}
	for _, a := range archives {
		out.Distribution.Binary[a.Target.RegistryKey()] = BinaryTarget{
			Archive: base + url.PathEscape(a.Name),
			SHA256:  a.SHA256,
			Cmd:     "./" + a.Target.Executable(),
		}
	}
	return out, nil
}
