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
		{"go subcommand", "bash", []registry.Subject{cmdSubj("go test ./...")}, []string{"bash(go test *)"}, "Always allow commands starting with go test in this session"},
		{"single word", "bash", []registry.Subject{cmdSubj("ls -la")}, []string{"bash(ls *)"}, "Always allow commands starting with ls in this session"},
		{"subcommand with option is exact", "bash", []registry.Subject{cmdSubj("git -C x status")}, []string{"bash(git -C x status)"}, `Always allow the exact command "git -C x status" in this session`},
		// Issue 14, finding 4: commands whose arguments can run code are
		// remembered exactly, so two grants cannot compose.
		{"git config is exact", "bash", []registry.Subject{cmdSubj("git config user.name Bob")}, []string{"bash(git config user.name Bob)"}, `Always allow the exact command "git config user.name Bob" in this session`},
		{"git -c is exact", "bash", []registry.Subject{cmdSubj("git -c core.pager=cat log")}, []string{"bash(git -c core.pager=cat log)"}, `Always allow the exact command "git -c core.pager=cat log" in this session`},
		{"upload-pack is exact", "bash", []registry.Subject{cmdSubj("git fetch --upload-pack=x origin")}, []string{"bash(git fetch --upload-pack=x origin)"}, `Always allow the exact command "git fetch --upload-pack=x origin" in this session`},
		{"git clone -u is exact", "bash", []registry.Subject{cmdSubj("git clone -u x repo")}, []string{"bash(git clone -u x repo)"}, `Always allow the exact command "git clone -u x repo" in this session`},
		{"find -exec is exact", "bash", []registry.Subject{cmdSubj("find . -name x -exec cat {} +")}, []string{"bash(find . -name x -exec cat {} +)"}, `Always allow the exact command "find . -name x -exec cat {} +" in this session`},
		{"xargs is exact", "bash", []registry.Subject{cmdSubj("xargs cat")}, []string{"bash(xargs cat)"}, `Always allow the exact command "xargs cat" in this session`},
		{"python -c is exact", "bash", []registry.Subject{cmdSubj("python3 -c print(1)")}, []string{"bash(python3 -c print(1))"}, `Always allow the exact command "python3 -c print(1)" in this session`},
		{"node -e is exact", "bash", []registry.Subject{cmdSubj("node -e 1")}, []string{"bash(node -e 1)"}, `Always allow the exact command "node -e 1" in this session`},
		{"env is exact", "bash", []registry.Subject{cmdSubj("env FOO=1 make")}, []string{"bash(env FOO=1 make)"}, `Always allow the exact command "env FOO=1 make" in this session`},
		{"go env is exact", "bash", []registry.Subject{cmdSubj("go env -w GOFLAGS=-x")}, []string{"bash(go env -w GOFLAGS=-x)"}, `Always allow the exact command "go env -w GOFLAGS=-x" in this session`},
		{"go test -exec is exact", "bash", []registry.Subject{cmdSubj("go test -exec x ./...")}, []string{"bash(go test -exec x ./...)"}, `Always allow the exact command "go test -exec x ./..." in this session`},
		{"npm exec is exact", "bash", []registry.Subject{cmdSubj("npm exec foo")}, []string{"bash(npm exec foo)"}, `Always allow the exact command "npm exec foo" in this session`},
		{"npm script", "bash", []registry.Subject{cmdSubj("npm run build:prod")}, []string{"bash(npm run *)"}, "Always allow commands starting with npm run in this session"},
		{"chained is exact", "bash", []registry.Subject{cmdSubj("make && make test")}, []string{"bash(make && make test)"}, `Always allow the exact command "make && make test" in this session`},
		{"destructive is exact", "bash", []registry.Subject{cmdSubj("rm -rf build")}, []string{"bash(rm -rf build)"}, `Always allow the exact command "rm -rf build" in this session`},
		{"destructive by path is exact", "bash", []registry.Subject{cmdSubj("/usr/bin/rm -rf build")}, []string{"bash(/usr/bin/rm -rf build)"}, `Always allow the exact command "/usr/bin/rm -rf build" in this session`},
		{"script", "bash", []registry.Subject{cmdSubj("./build.sh --fast")}, []string{"bash(./build.sh *)"}, "Always allow commands starting with ./build.sh in this session"},
		{"tool name not expressible", "my.tool", nil, nil, ""},
		{"tool name with star", "a*", nil, nil, ""},
		{"empty tool name", "", nil, nil, ""},
		{"assignment is exact", "bash", []registry.Subject{cmdSubj("GOOS=js go build")}, []string{"bash(GOOS=js go build)"}, `Always allow the exact command "GOOS=js go build" in this session`},
		{"exact ending in star", "bash", []registry.Subject{cmdSubj("rm *")}, nil, ""},
		{"file in cwd subdir", "edit", []registry.Subject{pathSubj("src/a.go")}, []string{"edit(/w/src/**)"}, "Always allow the edit tool under src/ in this session"},
		{"file in cwd", "edit", []registry.Subject{pathSubj("/w/a.go")}, []string{"edit(/w/**)"}, "Always allow the edit tool anywhere in the workspace in this session"},
		{"file outside cwd", "read", []registry.Subject{pathSubj("/etc/ssl/x.pem")}, []string{"read(/etc/ssl/**)"}, "Always allow the read tool under /etc/ssl/ in this session"},
		{"file in root", "read", []registry.Subject{pathSubj("/x")}, []string{"read(/x)"}, "Always allow the read tool on /x in this session"},
		{"glob characters escaped", "edit", []registry.Subject{pathSubj("/w/[id]/*.go")}, []string{`edit(/w/\[id]/**)`}, "Always allow the edit tool under [id]/ in this session"},
		{"two paths, one dir", "move", []registry.Subject{pathSubj("src/a"), pathSubj("src/b")}, []string{"move(/w/src/**)"}, "Always allow the move tool under src/ in this session"},
		{"two dirs", "move", []registry.Subject{pathSubj("src/a"), pathSubj("doc/b")}, []string{"move(/w/src/**)", "move(/w/doc/**)"}, "Always allow the move tool under src/ and the move tool under doc/ in this session"},
		{"no subjects", "think", nil, []string{"think"}, "Always allow the think tool in this session"},
		{"file changes in cwd", ClassEdits, []registry.Subject{pathSubj("/w/a.go")}, []string{"@edits(/w/**)"}, "Always allow file changes anywhere in the workspace in this session"},
		{"file changes in a subdir", ClassEdits, []registry.Subject{pathSubj("src/a.go")}, []string{"@edits(/w/src/**)"}, "Always allow file changes under src/ in this session"},
		{"other", "fetch", []registry.Subject{otherSubj("https://go.dev/x")}, []string{"fetch(https://go.dev/x)"}, "Always allow the fetch tool on https://go.dev/x in this session"},
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
	if got := s.Label(Deny, ScopeSession); got != "Always reject commands starting with go test in this session" {
		t.Errorf("reject label = %q", got)
	}
	long := Suggest("bash", []registry.Subject{cmdSubj("make a && make bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\nx`y`")}, "")
	if got := long.Label(Allow, ScopeSession); got != `Always allow the exact command "make a && make `+strings.Repeat("b", 45)+`…" in this session` {
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

// TestRememberedRulesDoNotCompose is issue 14's finding 4: after "always
// allow" for `git config user.name Bob` and `git status`, the attacker's
// `git config core.fsmonitor …` and code-running options past a prefix
// are not allowed.
func TestRememberedRulesDoNotCompose(t *testing.T) {
	var rs RuleSet
	rs.Cwd = "/w"
	for _, cmd := range []string{"git config user.name Bob", "git status", "go test ./...", "find . -name x"} {
		for _, r := range Suggest("bash", []registry.Subject{cmdSubj(cmd)}, "/w").Rules {
			rs.Add(Allow, r)
		}
	}
	for _, cmd := range []string{"git status", "git config user.name Bob", "go test -run X ./..."} {
		if v := rs.Evaluate("bash", []registry.Subject{cmdSubj(cmd)}); v.Decision != Allow {
			t.Errorf("%q = %v, want allowed", cmd, v)
		}
	}
	for _, cmd := range []string{
		"git config core.fsmonitor 'touch X'",
		"git config --global core.hooksPath /tmp/h",
		"git -c core.fsmonitor=x status",
		"git status --upload-pack=x",
		"go test -exec 'sh -c x' ./...",
		"go test -toolexec=x ./...",
		"find . -name x -exec sh -c x {} +",
		"find . -execdir x {} +",
	} {
		if v := rs.Evaluate("bash", []registry.Subject{cmdSubj(cmd)}); v.Decision == Allow {
			t.Errorf("%q is allowed by %s", cmd, v.Rule)
		}
	}
}
