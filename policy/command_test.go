package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestCompound(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"go test ./...", false},
		{"go test ./... 2>&1", false},
		{"make 2>&1 >&- <&0", false},
		{"grep -n 'a\tb' x.go", false},
		{"cat < in.txt", false},
		{"go test && rm -rf /", true},
		{"go test || true", true},
		{"go test; rm x", true},
		{"go test | tee out", true},
		{"go test `rm x`", true},
		{"go test $(rm x)", true},
		{"diff <(ls a) b", true},
		{"tee >(rm x)", true},
		{"go test\nrm x", true},
		{"go test\rrm x", true},
		{"sleep 1 & rm x", true},
		{"go test > out.txt", true},
		{"go test >> out.txt", true},
		{"go test &> out.txt", true},
		{"go test >| out.txt", true},
		{"go test 2>&file", true},
		{"go test >&", true},
		{"echo 'a;b'", true}, // conservative: quotes are ignored
		{"echo \x00", true},
	}
	for _, tt := range tests {
		if got := Compound(tt.cmd); got != tt.want {
			t.Errorf("Compound(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestSegments(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"go test ./...", []string{"go test ./..."}},
		{"  go   test  ", []string{"go test"}},
		{"make && rm -rf /", []string{"make", "rm -rf /"}},
		{"a || b; c | d & e", []string{"a", "b", "c", "d", "e"}},
		{"echo $(rm -rf /)", []string{"echo", "rm -rf /"}},
		{"echo `rm x`", []string{"echo", "rm x"}},
		{"diff <(rm a) b", []string{"diff", "rm a", "b"}},
		{"FOO=1 BAR=x sudo env rm x", []string{"rm x"}},
		{"if true; then rm x; fi", []string{"true", "rm x", "fi"}},
		{"{ rm x; }", []string{"rm x"}},
		{"find . | xargs rm", []string{"find .", "rm"}},
		{"! rm x", []string{"rm x"}},
		{"a\nb\r\nc", []string{"a", "b", "c"}},
		{"", []string{}},
		{"=x", []string{"=x"}},
	}
	for _, tt := range tests {
		got := Segments(tt.cmd)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Segments(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestCommandPattern(t *testing.T) {
	tests := []struct {
		pattern, cmd string
		allow, deny  bool // permissive and restrictive matching
	}{
		{"go test *", "go test", true, true},
		{"go test *", "go test ./...", true, true},
		{"go test *", "go  test\t-run X", true, true},
		{"go test:*", "go test -v", true, true},
		{"go test *", "go testify", false, false},
		{"go test *", "go vet", false, false},
		{"go test *", "go test && rm -rf /", false, true},
		{"go test *", "go test ./... > out", false, true},
		{"rm *", "make && rm -rf /", false, true},
		{"rm *", "echo $(rm -rf /)", false, true},
		{"rm *", "sudo rm x", false, true},
		{"rm *", "FOO=1 rm x", false, true},
		{"rm *", "rmdir x", false, false},
		{"*", "anything at all", true, true},
		{"*", "a && b", false, true},
		{":*", "ls", true, true},
		{"make build", "make build", true, true},
		{"make build", "  make build ", true, true},
		{"make build", "make build extra", false, false},
		{"make build", "make  build", false, true},
		{"make && make test", "make && make test", true, true},
		{"make && make test", "make &&  make test", false, false},
		{"rm -rf /", "cd / && rm -rf /", false, true},
	}
	for _, tt := range tests {
		if got := matchCommand(tt.pattern, tt.cmd, false); got != tt.allow {
			t.Errorf("allow %q on %q = %v, want %v", tt.pattern, tt.cmd, got, tt.allow)
		}
		if got := matchCommand(tt.pattern, tt.cmd, true); got != tt.deny {
			t.Errorf("deny %q on %q = %v, want %v", tt.pattern, tt.cmd, got, tt.deny)
		}
	}
}

// FuzzChaining checks the invariants the permission model rests on: a
// prefix rule never allows a compound command, a segment never holds a
// chaining character, and a deny rule built from any segment denies the
// whole command.
func FuzzChaining(f *testing.F) {
	for _, s := range []string{"go test ./...", "a && b", "x; y", "a|b", "`x`", "$(x)", "a\nb", "a 2>&1", "a > b", "FOO=1 sudo rm -rf /", "x &"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		compound := Compound(cmd)
		if compound && matchCommand("*", cmd, false) {
			t.Fatalf("allow * matched compound %q", cmd)
		}
		if !compound && strings.ContainsAny(cmd, ";|`\n\r") {
			t.Fatalf("Compound(%q) = false", cmd)
		}
		segments := Segments(cmd)
		for _, seg := range segments {
			if strings.ContainsAny(seg, ";|&`\n\r(){}") || seg != strings.TrimSpace(seg) || seg == "" {
				t.Fatalf("Segments(%q) has %q", cmd, seg)
			}
			words := strings.Fields(seg)
			if len(words) > 0 && !strings.HasSuffix(words[0], "*") {
				if !matchCommand(words[0]+" *", cmd, true) {
					t.Fatalf("deny %q * does not match %q (segments %q)", words[0], cmd, segments)
				}
			}
		}
	})
}

// TestDenyRuleSpellings is issue 14's finding 6: a deny rule compares the
// program a command runs, not how the command spells it.
func TestDenyRuleSpellings(t *testing.T) {
	denied := []string{
		"rm -rf x",
		"/bin/rm -rf x",
		"/usr/bin/../bin/rm x",
		`\rm x`,
		`'rm' x`,
		`"rm" x`,
		`r""m x`,
		"command rm x",
		"command -p rm x",
		"exec rm x",
		"exec -a foo rm x",
		"env rm x",
		"env -i FOO=1 rm x",
		"env -u HOME rm x",
		"env -- rm x",
		"nice rm x",
		"nice -n 10 rm x",
		"nice -10 /bin/rm x",
		"nohup rm x",
		"timeout 5 rm x",
		"timeout -s KILL 5s rm x",
		"timeout --signal=KILL 5 rm x",
		"sudo rm x",
		"sudo -u root rm x",
		"sudo -E env nice rm x",
		"doas rm x",
		"xargs rm < list",
		"xargs -n 1 rm",
		"stdbuf -o0 rm x",
		"setsid rm x",
		"sh -c 'rm -rf x'",
		`bash -c "rm -rf x"`,
		"bash -lc 'echo hi; rm -rf x'",
		"/bin/sh -c 'nice rm x'",
		`sh -c "sh -c 'rm x'"`,
		"eval rm x",
		"find . -name '*.o' -exec rm {} +",
		"find . -execdir /bin/rm {} \\;",
		"true && \\rm x",
		"echo $(/bin/rm x)",
	}
	for _, cmd := range denied {
		if !matchCommand("rm *", cmd, true) {
			t.Errorf("deny rm * does not match %q (resolved %q)", cmd, ResolvedCommands(cmd))
		}
	}
	// A pattern spelled with a path or quotes means the same program.
	for _, pattern := range []string{"/bin/rm *", `'rm' *`} {
		if !matchCommand(pattern, "rm -rf x", true) || !matchCommand(pattern, "env rm x", true) {
			t.Errorf("deny %s does not match rm", pattern)
		}
	}
	if !matchCommand("sudo *", "sudo rm x", true) {
		t.Error("a rule naming the wrapper no longer matches it")
	}
	allowed := []string{"rmdir x", "git rm x", "echo rm x", "grep -r 'rm -rf' .", "./rmx", "farm x", "env FOO=rm make"}
	for _, cmd := range allowed {
		if matchCommand("rm *", cmd, true) {
			t.Errorf("deny rm * matches %q (resolved %q)", cmd, ResolvedCommands(cmd))
		}
	}
	// Allow rules keep comparing spelling exactly: /bin/rm is not vouched
	// for by an allow rule for rm, which errs on the side of asking.
	if matchCommand("rm *", "/bin/rm x", false) {
		t.Error("allow rm * matched /bin/rm")
	}
}
