package grants_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/policy"
)

func rule(text string) policy.Rule { return policy.MustParseRule(text) }

func texts(gs []grants.Grant) []string {
	var out []string
	for _, g := range gs {
		out = append(out, string(g.Scope)+" "+g.Decision.String()+" "+g.Rule.String())
	}
	return out
}

func TestAddIsSeenByAnotherStore(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	user := filepath.Join(dir, "config", "dshd", grants.FileName)
	a, b := grants.New(user), grants.New(user)
	clock := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	grants.SetClock(b, func() time.Time { return clock })
	if _, err := a.Add(proj, policy.ScopeProject, policy.Allow, rule("@edits("+proj+"/src/**)"), rule("bash(go test *)")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(proj, policy.ScopeUser, policy.Deny, rule("bash(git push *)")); err != nil {
		t.Fatal(err)
	}
	// b read nothing before; the files are new to it.
	gs, errs := b.Grants(proj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []string{"project allow @edits(" + proj + "/src/**)", "project allow bash(go test *)", "user deny bash(git push *)"}
	if !slices.Equal(texts(gs), want) {
		t.Errorf("grants %q, want %q", texts(gs), want)
	}
	rs, _ := b.RuleSet(proj)
	if v := rs.Evaluate("bash", nil); v.Decision != policy.None {
		t.Errorf("bash without subjects: %v", v)
	}
	// Revoked by a: b uses what it read for up to Recheck, then notices
	// the change.
	if _, err := a.Remove(proj, gs[1]); err != nil {
		t.Fatal(err)
	}
	if still, _ := b.Grants(proj); !slices.Equal(texts(still), want) {
		t.Errorf("within Recheck of its last look b has %q, want what it read, %q", texts(still), want)
	}
	clock = clock.Add(grants.Recheck)
	gs, _ = b.Grants(proj)
	if len(gs) != 2 || gs[1].Rule.String() != "bash(git push *)" {
		t.Errorf("after revoke: %q", texts(gs))
	}
	// a's own change applies to a at once.
	if own, _ := a.Grants(proj); len(own) != 2 {
		t.Errorf("a after its revoke: %q", texts(own))
	}
	// The project's file is git-ignored by a .gitignore beside it.
	ignore, err := os.ReadFile(filepath.Join(proj, ".dshd", ".gitignore"))
	if err != nil || !strings.Contains(string(ignore), "\n"+grants.FileName+"\n") {
		t.Errorf(".gitignore %q, %v", ignore, err)
	}
	// Nothing else is left behind but the lock files.
	ents, _ := os.ReadDir(filepath.Join(proj, ".dshd"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".gitignore", grants.FileName, grants.FileName + ".lock"}) {
		t.Errorf("project directory holds %q", names)
	}
}

func TestAddTwiceAndFlip(t *testing.T) {
	proj := t.TempDir()
	s := grants.New("")
	r := rule("bash(make *)")
	for range 2 {
		if _, err := s.Add(proj, policy.ScopeProject, policy.Allow, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(proj, policy.ScopeProject, policy.Deny, r); err != nil {
		t.Fatal(err)
	}
	gs, _ := s.Grants(proj)
	if want := []string{"project deny bash(make *)"}; !slices.Equal(texts(gs), want) {
		t.Errorf("grants %q, want %q", texts(gs), want)
	}
	if _, err := s.Add(proj, policy.ScopeUser, policy.Allow, r); err == nil {
		t.Error("a store without a user file accepted a user grant")
	}
}

func TestKeepsTheGitignore(t *testing.T) {
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".dshd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".dshd", ".gitignore"), []byte("cache/"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := grants.New("").Add(proj, policy.ScopeProject, policy.Allow, rule("read")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(proj, ".dshd", ".gitignore"))
	if !strings.HasPrefix(string(b), "cache/\n"+grants.FileName+"\n") {
		t.Errorf(".gitignore = %q", b)
	}
}

// TestDamagedFile: a damaged file is reported and ignored, and the next
// change keeps it aside byte for byte before writing a fresh file.
func TestDamagedFile(t *testing.T) {
	for name, content := range map[string]string{
		"syntax":      `{"permissions": {"allow": ["read"`,
		"unknown key": `{"permissions": {"alow": ["read"]}}`,
		"bad rule":    "{\"permissions\": {\n  \"allow\": [\"read(\"]}}",
		"other keys":  `{"model": {"provider": "openai"}, "permissions": {"allow": ["read"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			proj := t.TempDir()
			path := grants.ProjectFile(proj)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s := grants.New("")
			gs, errs := s.Grants(proj)
			var fe *config.FileError
			if len(gs) != 0 || len(errs) != 1 || !errors.As(errs[0], &fe) || fe.Path != path {
				t.Fatalf("grants %q, errors %v", texts(gs), errs)
			}
			t.Logf("reported: %v", errs[0])
			// Revoking changes nothing, so the file stays as it is.
			if _, err := s.Remove(proj, grants.Grant{Scope: policy.ScopeProject, Decision: policy.Allow, Rule: rule("read")}); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("a no-op revoke rewrote the damaged file: %q", b)
			}
			note, err := s.Add(proj, policy.ScopeProject, policy.Allow, rule("grep"))
			if err != nil {
				t.Fatal(err)
			}
			if note.Damaged == nil || note.KeptAs == "" {
				t.Fatalf("note %+v", note)
			}
			if b, err := os.ReadFile(note.KeptAs); err != nil || string(b) != content {
				t.Errorf("kept copy %q, %v", b, err)
			}
			gs, errs = s.Grants(proj)
			if len(errs) != 0 || !slices.Equal(texts(gs), []string{"project allow grep"}) {
				t.Errorf("after the fresh start: %q, %v", texts(gs), errs)
			}
		})
	}
}

func TestEmptyFileIsNoRules(t *testing.T) {
	proj := t.TempDir()
	path := grants.ProjectFile(proj)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gs, errs := grants.New("").Grants(proj)
	if len(gs) != 0 || len(errs) != 0 {
		t.Errorf("%q %v", texts(gs), errs)
	}
}
