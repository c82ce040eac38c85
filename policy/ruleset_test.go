package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

func pathSubj(p string) registry.Subject {
	return registry.Subject{Kind: registry.SubjectPath, Value: p}
}
func cmdSubj(c string) registry.Subject {
	return registry.Subject{Kind: registry.SubjectCommand, Value: c}
}
func otherSubj(v string) registry.Subject {
	return registry.Subject{Kind: registry.SubjectOther, Value: v}
}

func TestMatchPath(t *testing.T) {
	const cwd, home = "/work/proj", "/home/ann"
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{"src/**", "src/a/b.go", true},
		{"src/**", "/work/proj/src/a.go", true},
		{"src/**", "src", true},
		{"src/**", "srcx/a.go", false},
		{"/work/proj/src/**", "src/a.go", true},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/a/b.go", false},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "c.go", true},
		{"**/*.go", "/etc/c.go", true}, // unanchored
		{"*/*.go", "/etc/c.go", false}, // anchored at cwd
		{"*/*.go", "src/c.go", true},
		{"/**/*.go", "/etc/c.go", true},
		{"src/**/test/*.go", "src/test/a.go", true},
		{"src/**/test/*.go", "src/x/y/test/a.go", true},
		{"src/?.go", "src/ab.go", false},
		{"src/[ab].go", "src/b.go", true},
		{"src/[", "src/[", false}, // bad pattern never matches
		{`src/\*.go`, "src/*.go", true},
		{`src/\*.go`, "src/a.go", false},
		{"../other/**", "/work/other/x", true},
		{"src/**", "src/../../etc/passwd", false},
		{"**", "/work/proj/anything/deep", true},
		{"**", "/elsewhere", true},
		{"**/.env", ".env", true},
		{"**/.env", "/home/x/.env", true},
		{"**/.git/**", "/w/repo/.git/config", true},
		{"~/.ssh/**", "/home/ann/.ssh/id_ed25519", true},
		{"~", "/home/ann", true},
		{".env", ".env", true},
		{"**/.env", "config/.env", true},
	}
	for _, tt := range tests {
		if got := matchPath(tt.pattern, tt.subject, cwd, home); got != tt.want {
			t.Errorf("matchPath(%q, %q) = %v, want %v", tt.pattern, tt.subject, got, tt.want)
		}
	}
	if matchPath("~/.ssh/**", "/home/ann/.ssh/x", cwd, "") {
		t.Error("~ matched without a home directory")
	}
	if !matchPath("src/**", "src/a.go", "", "") || matchPath("src/**", "/work/proj/src/a.go", "", "") ||
		!matchPath("**/.env", "a/.env", "", "") {
		t.Error("relative matching without cwd")
	}
}

func TestEvaluate(t *testing.T) {
	rs, err := ParseRuleSet(
		[]string{"read", "grep", "bash(go test *)", "bash(git status)", "edit(src/**)", "mcp__docs__*", "fetch(https://go.dev/*)"},
		[]string{"bash(git push *)", "edit(src/generated/**)"},
		[]string{"edit(**/.env)", "bash(rm *)", "mcp__docs__delete", "read(~/.ssh/**)"},
	)
	if err != nil {
		t.Fatal(err)
	}
	rs.Cwd, rs.Home = "/w", "/home/u"
	tests := []struct {
		name     string
		tool     string
		subjects []registry.Subject
		want     Verdict
	}{
		{"tool-wide allow", "read", []registry.Subject{pathSubj("a.go")}, Verdict{Allow, "read"}},
		{"tool-wide allow without subjects", "grep", nil, Verdict{Allow, "grep"}},
		{"deny beats tool-wide allow", "read", []registry.Subject{pathSubj("/home/u/.ssh/id")}, Verdict{Deny, "read(~/.ssh/**)"}},
		{"prefix allow", "bash", []registry.Subject{cmdSubj("go test ./...")}, Verdict{Allow, "bash(go test *)"}},
		{"exact allow", "bash", []registry.Subject{cmdSubj("git status")}, Verdict{Allow, "bash(git status)"}},
		{"exact allow is exact", "bash", []registry.Subject{cmdSubj("git status -s")}, Verdict{}},
		{"chained never allowed", "bash", []registry.Subject{cmdSubj("go test ./... && curl x | sh")}, Verdict{}},
		{"deny in chain", "bash", []registry.Subject{cmdSubj("go test ./... && rm -rf /")}, Verdict{Deny, "bash(rm *)"}},
		{"ask in chain", "bash", []registry.Subject{cmdSubj("go test && git push origin")}, Verdict{Ask, "bash(git push *)"}},
		{"ask beats allow", "edit", []registry.Subject{pathSubj("src/generated/x.go")}, Verdict{Ask, "edit(src/generated/**)"}},
		{"path allow", "edit", []registry.Subject{pathSubj("/w/src/x.go")}, Verdict{Allow, "edit(src/**)"}},
		{"path outside", "edit", []registry.Subject{pathSubj("/etc/x")}, Verdict{}},
		{"deny any subject", "edit", []registry.Subject{pathSubj("src/a.go"), pathSubj("src/.env")}, Verdict{Deny, "edit(**/.env)"}},
		{"allow needs every subject", "edit", []registry.Subject{pathSubj("src/a.go"), pathSubj("docs/a.md")}, Verdict{}},
		{"allow every subject", "edit", []registry.Subject{pathSubj("src/a.go"), pathSubj("src/b/c.go")}, Verdict{Allow, "edit(src/**)"}},
		{"pattern rule needs subjects", "edit", nil, Verdict{}},
		{"mcp glob", "mcp__docs__search", nil, Verdict{Allow, "mcp__docs__*"}},
		{"mcp deny", "mcp__docs__delete", nil, Verdict{Deny, "mcp__docs__delete"}},
		{"other subject", "fetch", []registry.Subject{otherSubj("https://go.dev/doc/x")}, Verdict{Allow, "fetch(https://go.dev/*)"}},
		{"other subject miss", "fetch", []registry.Subject{otherSubj("https://evil.example/go.dev/")}, Verdict{}},
		{"unknown tool", "write", []registry.Subject{pathSubj("src/a.go")}, Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rs.Evaluate(tt.tool, tt.subjects); got != tt.want {
				t.Errorf("Evaluate = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEvaluateMixedRules(t *testing.T) {
	rs := RuleSet{Allow: []Rule{MustParseRule("move(src/**)"), MustParseRule("move(docs/**)")}, Cwd: "/w"}
	got := rs.Evaluate("move", []registry.Subject{pathSubj("src/a"), pathSubj("docs/a"), pathSubj("src/b")})
	if want := (Verdict{Allow, "move(src/**), move(docs/**)"}); got != want {
		t.Errorf("Evaluate = %+v, want %+v", got, want)
	}
}

func TestAddRemove(t *testing.T) {
	var rs RuleSet
	r := MustParseRule("bash(go test *)")
	if !rs.Add(Allow, r) || rs.Add(Allow, r) {
		t.Fatal("Add should add once")
	}
	if rs.Add(None, r) {
		t.Fatal("Add(None) added")
	}
	rs.Add(Deny, MustParseRule("bash(rm *)"))
	if got := rs.Evaluate("bash", []registry.Subject{cmdSubj("go test")}); got.Decision != Allow {
		t.Fatalf("after Add: %+v", got)
	}
	if !rs.Remove(r) || rs.Remove(r) {
		t.Fatal("Remove should remove once")
	}
	if got := rs.Evaluate("bash", []registry.Subject{cmdSubj("go test")}); got.Decision != None {
		t.Fatalf("after Remove: %+v", got)
	}
}

func TestStrictest(t *testing.T) {
	got := Strictest(Verdict{Allow, "a"}, Verdict{}, Verdict{Ask, "b"}, Verdict{Ask, "c"})
	if got != (Verdict{Ask, "b"}) {
		t.Errorf("Strictest = %+v", got)
	}
	if Strictest() != (Verdict{}) {
		t.Error("Strictest() not None")
	}
}

// TestEvaluateOnDisk: rules judge a path where the kernel would open it
// too, so a symlink neither slips past a deny rule nor stretches an allow
// rule to wherever it points.
func TestEvaluateOnDisk(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	for _, dir := range []string{"src", "secrets"} {
		if err := os.Mkdir(filepath.Join(ws, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"src/out":     outside,                                           // leaves the workspace
		"src/keys":    filepath.Join(ws, "secrets"),                      // into a denied directory
		"docs":        filepath.Join(ws, "src"),                          // another name for src
		"src/rel-out": filepath.Join("..", "..", filepath.Base(outside)), // relative, leaves too
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	rs := RuleSet{
		Allow: []Rule{MustParseRule("edit(src/**)")},
		Ask:   []Rule{MustParseRule("edit(**/*.lock)")},
		Deny:  []Rule{MustParseRule("edit(secrets/**)")},
		Cwd:   ws,
	}
	path := func(p string) []registry.Subject {
		return []registry.Subject{{Kind: registry.SubjectPath, Value: p, Writes: true}}
	}
	tests := []struct {
		path string
		want Decision
	}{
		{"src/a.go", Allow},
		{"src/out/evil.txt", None},     // allowed as written, lands outside
		{"src/rel-out/evil.txt", None}, // the same through a relative link
		{"src/keys/key.pem", Deny},     // lands in secrets/
		{"secrets/key.pem", Deny},
		{"docs/a.go", Allow}, // lands in src/
		{"src/out/x.lock", Ask},
		{"other.txt", None},
		{filepath.Join(outside, "f"), None},
	}
	for _, tt := range tests {
		if got := rs.EvaluateOnDisk("edit", path(tt.path)); got.Decision != tt.want {
			t.Errorf("%s: %v (%s), want %v", tt.path, got.Decision, got.Rule, tt.want)
		}
	}
	// Commands are not paths: nothing to resolve.
	cmd := []registry.Subject{{Kind: registry.SubjectCommand, Value: "ls src/out"}}
	if got := (RuleSet{Allow: []Rule{MustParseRule("bash(ls *)")}, Cwd: ws}).EvaluateOnDisk("bash", cmd); got.Decision != Allow {
		t.Errorf("command: %v", got.Decision)
	}
}
