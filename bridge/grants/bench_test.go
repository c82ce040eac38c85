package grants_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/policy"
)

// BenchmarkRuleSet is what every permission verdict of a session pays for
// the remembered answers: two stats (project and user file) and, while the
// files do not change, the cached rules made into a rule set.
func BenchmarkRuleSet(b *testing.B) {
	proj := b.TempDir()
	s := grants.New(filepath.Join(b.TempDir(), grants.FileName))
	for i := range 10 {
		if _, err := s.Add(proj, policy.ScopeProject, policy.Allow, policy.MustParseRule("bash(tool"+strconv.Itoa(i)+" *)")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if rs, errs := s.RuleSet(proj); len(rs.Allow) != 10 || len(errs) != 0 {
			b.Fatal(rs, errs)
		}
	}
}
