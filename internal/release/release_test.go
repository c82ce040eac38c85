package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var mtime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func packAll(t *testing.T) []Archive {
	t.Helper()
	var out []Archive
	for _, tg := range Targets {
		a, err := Pack(tg, "v1.2.3", []byte("binary for "+tg.RegistryKey()), mtime)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// The same input gives the same bytes, whatever the time zone or the
// moment of packing, and the archive holds the executable, executable.
func TestPackReproducible(t *testing.T) {
	first := packAll(t)
	time.Local = time.FixedZone("elsewhere", 5*3600+1800)
	defer func() { time.Local = time.UTC }()
	second := packAll(t)
	for i := range first {
		if !bytes.Equal(first[i].Data, second[i].Data) || first[i].SHA256 != second[i].SHA256 {
			t.Errorf("%s differs between two runs", first[i].Name)
		}
	}
	for _, a := range first {
		name, mode, data, mod := unpack(t, a)
		want := "binary for " + a.Target.RegistryKey()
		if name != a.Target.Executable() || mode&0o111 == 0 || string(data) != want || !mod.Equal(mtime) {
			t.Errorf("%s holds %q mode %v %q at %v", a.Name, name, mode, data, mod)
		}
	}
}

func unpack(t *testing.T, a Archive) (name string, mode os.FileMode, data []byte, mod time.Time) {
	t.Helper()
	if strings.HasSuffix(a.Name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(a.Data), int64(len(a.Data)))
		if err != nil || len(zr.File) != 1 {
			t.Fatalf("%s: %v, %d entries", a.Name, err, len(zr.File))
		}
		f := zr.File[0]
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		data, _ = io.ReadAll(rc)
		return f.Name, f.Mode(), data, f.Modified.UTC()
	}
	gz, err := gzip.NewReader(bytes.NewReader(a.Data))
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	tr := tar.NewReader(gz)
	h, err := tr.Next()
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	data, _ = io.ReadAll(tr)
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("%s: more than one entry", a.Name)
	}
	return h.Name, h.FileInfo().Mode(), data, h.ModTime.UTC()
}

func TestNames(t *testing.T) {
	var keys, names []string
	for _, tg := range Targets {
		keys = append(keys, tg.RegistryKey())
		names = append(names, tg.ArchiveName("v1.2.3"))
	}
	if got := strings.Join(keys, " "); got != "darwin-aarch64 darwin-x86_64 linux-aarch64 linux-x86_64 windows-aarch64 windows-x86_64" {
		t.Errorf("registry keys %s", got)
	}
	if names[4] != "dshd-v1.2.3-windows-arm64.zip" || names[3] != "dshd-v1.2.3-linux-amd64.tar.gz" {
		t.Errorf("archive names %v", names)
	}
}

func TestSHA256Sums(t *testing.T) {
	as := packAll(t)
	sums := string(SHA256Sums(as))
	lines := strings.Split(strings.TrimSuffix(sums, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("SHA256SUMS:\n%s", sums)
	}
	line := regexp.MustCompile(`^[0-9a-f]{64}  dshd-v1\.2\.3-[a-z]+-[a-z0-9]+\.(tar\.gz|zip)$`)
	for i, l := range lines {
		if !line.MatchString(l) || (i > 0 && lines[i-1][66:] > l[66:]) {
			t.Errorf("line %q (sorted, sha256sum format?)", l)
		}
	}
}

var meta = Meta{ID: "dshd", Name: "dshd", Description: "An ACP agent daemon", Repository: "https://github.com/dsh-tools/dshd",
	License: "proprietary", Authors: []string{"dshd maintainers"}}

// The manifest has the registry's format: checked field by field here
// against the format documented in the registry's FORMAT.md and
// agent.schema.json (see [Manifest]), and against that schema itself when
// ACP_REGISTRY_SCHEMA names a copy of it (it is not part of this
// repository).
func TestManifest(t *testing.T) {
	as := packAll(t)
	m, err := NewManifest(meta, "v1.2.3", "https://example.org/releases/download/v1.2.3/", as)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "version", "description", "repository", "license", "authors", "distribution"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("manifest lacks %q", k)
		}
	}
	if doc["version"] != "1.2.3" {
		t.Errorf("version %v: the registry wants 1.2.3", doc["version"])
	}
	bin := doc["distribution"].(map[string]any)["binary"].(map[string]any)
	if len(bin) != 6 {
		t.Errorf("%d targets", len(bin))
	}
	hex64 := regexp.MustCompile(`^[a-f0-9]{64}$`)
	for _, a := range as {
		e, ok := bin[a.Target.RegistryKey()].(map[string]any)
		if !ok {
			t.Errorf("no target %s", a.Target.RegistryKey())
			continue
		}
		if e["archive"] != "https://example.org/releases/download/v1.2.3/"+a.Name || !hex64.MatchString(e["sha256"].(string)) ||
			e["sha256"] != a.SHA256 || e["cmd"] != "./"+a.Target.Executable() {
			t.Errorf("%s: %v", a.Target.RegistryKey(), e)
		}
		for k := range e {
			if k != "archive" && k != "sha256" && k != "cmd" && k != "args" && k != "env" {
				t.Errorf("%s: field %q is not in the registry format", a.Target.RegistryKey(), k)
			}
		}
	}

	path := os.Getenv("ACP_REGISTRY_SCHEMA")
	if path == "" {
		t.Log("ACP_REGISTRY_SCHEMA unset: checked against the documented format only")
		return
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("registry schema %s: %v", path, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("agent.json does not validate against %s: %v\n%s", path, err, raw)
	}
}

func TestBadInput(t *testing.T) {
	as := packAll(t)
	for _, tc := range []struct {
		name       string
		m          Meta
		version, u string
	}{
		{"version without v", meta, "1.2.3", "https://x.org/v1"},
		{"version not semver", meta, "v1.2", "https://x.org/v1"},
		{"relative URL", meta, "v1.2.3", "releases/v1"},
		{"no scheme", meta, "v1.2.3", "x.org/v1"},
		{"bad id", Meta{ID: "Dshd", Name: "d", Description: "d", License: "MIT"}, "v1.2.3", "https://x.org/v1"},
		{"no license", Meta{ID: "dshd", Name: "d", Description: "d"}, "v1.2.3", "https://x.org/v1"},
	} {
		if _, err := NewManifest(tc.m, tc.version, tc.u, as); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := Pack(Targets[0], "latest", nil, mtime); err == nil {
		t.Error("Pack accepted version latest")
	}
}
