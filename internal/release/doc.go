// Package release writes dshd's release artifacts: one archive per target
// editors run on, their SHA256SUMS, and the ACP Registry manifest
// (agent.json) that lets an editor install dshd. `make dist` drives it
// through scripts/mkdist:
//
//	a, _ := release.Pack(release.Target{GOOS: "linux", GOARCH: "arm64"}, "v1.2.3", binary, mtime)
//	// a.Name == "dshd-v1.2.3-linux-arm64.tar.gz", a.Data its bytes, a.SHA256 their hash
//	m, _ := release.NewManifest(release.Meta{...}, "https://example.org/dl/v1.2.3", archives)
//
// Archives are reproducible: the same binary and mtime give the same
// bytes (one entry, fixed owner, mode and time; gzip without a name or
// time; zip with a fixed time and no extra fields). The binaries are made
// reproducible by the build (-trimpath, no build id, no VCS stamp).
package release
