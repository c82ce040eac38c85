package grants_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/policy"
)

// FuzzGrantsFile feeds arbitrary bytes as a project file: reading never
// panics, a damaged file yields no rules, and a file that reads without
// error yields only rules that parse. (Changing a file is covered by the
// unit tests: each change fsyncs, too slow for fuzzing.)
func FuzzGrantsFile(f *testing.F) {
	f.Add([]byte(`{"permissions": {"allow": ["read", "@edits(/p/**)"], "deny": ["bash(rm *)"]}}`))
	f.Add([]byte(`{"permissions": {"allow": ["read("]}}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		proj := t.TempDir()
		path := grants.ProjectFile(proj)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := grants.New("")
		gs, errs := s.Grants(proj)
		if len(errs) > 0 && len(gs) > 0 {
			t.Fatalf("a damaged file gave grants %v", gs)
		}
		for _, g := range gs {
			if _, err := policy.ParseRule(g.Rule.String()); err != nil {
				t.Fatalf("grant %v does not parse: %v", g.Rule, err)
			}
		}
	})
}
