package policy

import (
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		subjects []registry.Subject
		rules    []string
		allow    string
	}{
		{"go subcommand", "bash", []registry.Subject{cmdSubj("go test ./...")}, []string{"bash(go test *)"}, "Always allow `go test …` in this session"},
		{"single word", "bash", []registry.Subject{cmdSubj("ls -la")}, []string{"bash(ls *)"}, "Always allow `ls …` in this session"},
		{"subcommand with option", "bash", []registry.Subject{cmdSubj("git -C x status")}, []string{"bash(git *)"}, "Always allow `git …` in this session"},
		{"npm script", "bash", []registry.Subject{cmdSubj("npm run build:prod")}, []string{"bash(npm run *)"}, "Always allow `npm run …` in this session"},
		{"chained is exact", "bash", []registry.Subject{cmdSubj("make && make test")}, []string{"bash(make && make test)"}, "Always allow `make && make test` in this session"},
		{"destructive is exact", "bash", []registry.Subject{cmdSubj("rm -rf build")}, []string{"bash(rm -rf build)"}, "Always allow `rm -rf build` in this session"},
		{"destructive by path is exact", "bash", []registry.Subject{cmdSubj("/usr/bin/rm -rf build")}, []string{"bash(/usr/bin/rm -rf build)"}, "Always allow `/usr/bin/rm -rf build` in this session"},
		{"script", "bash", []registry.Subject{cmdSubj("./build.sh --fast")}, []string{"bash(./build.sh *)"}, "Always allow `./build.sh …` in this session"},
		{"tool name not expressible", "my.tool", nil, nil, ""},
		{"tool name with star", "a*", nil, nil, ""},
		{"empty tool name", "", nil, nil, ""},
		{"assignment is exact", "bash", []registry.Subject{cmdSubj("GOOS=js go build")}, []string{"bash(GOOS=js go build)"}, "Always allow `GOOS=js go build` in this session"},
		{"exact ending in star", "bash", []registry.Subject{cmdSubj("rm *")}, nil, ""},
		{"file in cwd subdir", "edit", []registry.Subject{pathSubj("src/a.go")}, []string{"edit(/w/src/**)"}, "Always allow `edit` under `src/` in this session"},
		{"file in cwd", "edit", []registry.Subject{pathSubj("/w/a.go")}, []string{"edit(/w/**)"}, "Always allow `edit` under `./` in this session"},
		{"file outside cwd", "read", []registry.Subject{pathSubj("/etc/ssl/x.pem")}, []string{"read(/etc/ssl/**)"}, "Always allow `read` under `/etc/ssl/` in this session"},
		{"file in root", "read", []registry.Subject{pathSubj("/x")}, []string{"read(/x)"}, "Always allow `read` on `/x` in this session"},
		{"glob characters escaped", "edit", []registry.Subject{pathSubj("/w/[id]/*.go")}, []string{`edit(/w/\[id]/**)`}, "Always allow `edit` under `[id]/` in this session"},
		{"two paths, one dir", "move", []registry.Subject{pathSubj("src/a"), pathSubj("src/b")}, []string{"move(/w/src/**)"}, "Always allow `move` under `src/` in this session"},
		{"two dirs", "move", []registry.Subject{pathSubj("src/a"), pathSubj("doc/b")}, []string{"move(/w/src/**)", "move(/w/doc/**)"}, "Always allow `move` under `src/` and `move` under `doc/` in this session"},
		{"no subjects", "think", nil, []string{"think"}, "Always allow `think` in this session"},
		{"other", "fetch", []registry.Subject{otherSubj("https://go.dev/x")}, []string{"fetch(https://go.dev/x)"}, "Always allow `fetch` on `https://go.dev/x` in this session"},
		{"other with star", "fetch", []registry.Subject{otherSubj("a*b")}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Suggest(tt.tool, tt.subjects, "/w")
			if len(s.Rules) != len(tt.rules) || s.OK() != (tt.rules != nil) {
				t.Fatalf("rules = %v, want %v", s.Rules, tt.rules)
			}
			for i, r := range s.Rules {
				if r.String() != tt.rules[i] {
					t.Errorf("rule %d = %s, want %s", i, r, tt.rules[i])
				}
				if _, err := ParseRule(r.String()); err != nil {
					t.Errorf("suggested rule does not parse: %v", err)
				}
			}
			if !s.OK() {
				return
			}
			if got := s.Label(Allow, ScopeSession); got != tt.allow {
				t.Errorf("label = %q, want %q", got, tt.allow)
			}
			// The remembered rules must cover the call they were made for,
			// both as allow and as deny rules.
			for _, d := range []Decision{Allow, Deny} {
				var rs RuleSet
				rs.Cwd = "/w"
				for _, r := range s.Rules {
					rs.Add(d, r)
				}
				if got := rs.Evaluate(tt.tool, tt.subjects); got.Decision != d {
					t.Errorf("remembered %v rules give %+v for the same call", d, got)
				}
			}
		})
	}
}

func TestSuggestLabels(t *testing.T) {
	s := Suggest("bash", []registry.Subject{cmdSubj("go test ./...")}, "")
	if got := s.Label(Deny, ScopeSession); got != "Always reject `go test …` in this session" {
		t.Errorf("reject label = %q", got)
	}
	long := Suggest("bash", []registry.Subject{cmdSubj("make a && make bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\nx`y`")}, "")
	if got := long.Label(Allow, ScopeSession); got != "Always allow `make a && make "+strings.Repeat("b", 45)+"…` in this session" {
		t.Errorf("long label = %q", got)
	}
}

// FuzzSuggest checks that a remembered grant always parses and covers the
// call it was made for, and that a prefix is never suggested for a
// compound command.
func FuzzSuggest(f *testing.F) {
	for _, s := range []string{"go test ./...", "make && make test", "rm *", "ls -la", "GOOS=js go build", "src/a.go", "/x"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, command bool) {
		subj := pathSubj(value)
		if command {
			subj = cmdSubj(value)
		}
		s := Suggest("tool", []registry.Subject{subj}, "/w")
		for _, r := range s.Rules {
			again, err := ParseRule(r.String())
			if err != nil || again != r {
				t.Fatalf("rule %q does not parse back: %v", r, err)
			}
			if command && Compound(value) && parseCommandPattern(r.Pattern).exact == "" {
				t.Fatalf("prefix rule %q suggested for compound %q", r, value)
			}
		}
		for _, d := range []Decision{Allow, Deny} {
			rs := RuleSet{Cwd: "/w"}
			for _, r := range s.Rules {
				rs.Add(d, r)
			}
			if got := rs.Evaluate("tool", []registry.Subject{subj}); s.OK() && got.Decision != d {
				t.Fatalf("rules %v as %v give %+v for %q", s.Rules, d, got, value)
			}
		}
	})
}
