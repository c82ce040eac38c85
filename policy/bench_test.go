package policy

import (
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

// BenchmarkEvaluate decides a command call against a settings-sized rule
// set plus a few remembered grants: the per-call cost the bridge pays in
// its pre-execute listener.
func BenchmarkEvaluate(b *testing.B) {
	rs, err := ParseRuleSet(
		[]string{"read", "grep", "glob", "bash(go test *)", "bash(go vet *)", "bash(git status)", "bash(git diff *)", "edit(src/**)", "mcp__docs__*"},
		[]string{"bash(git push *)", "edit(src/generated/**)", "bash(npm publish *)"},
		[]string{"edit(**/.env)", "read(**/.env)", "bash(rm *)", "bash(curl *)", "bash(sudo *)", "mcp__docs__delete", "read(~/.ssh/**)"},
	)
	if err != nil {
		b.Fatal(err)
	}
	rs.Cwd, rs.Home = "/home/ann/proj", "/home/ann"
	subjects := []registry.Subject{{Kind: registry.SubjectCommand, Value: "go test -race ./... -run TestX"}}
	b.ReportAllocs()
	for b.Loop() {
		if v := rs.Evaluate("bash", subjects); v.Decision != Allow {
			b.Fatal(v)
		}
	}
}

// BenchmarkEvaluatePath is the same for an edit with two path subjects.
func BenchmarkEvaluatePath(b *testing.B) {
	rs, err := ParseRuleSet([]string{"edit(src/**)"}, []string{"edit(src/generated/**)"}, []string{"edit(**/.env)", "edit(~/.ssh/**)"})
	if err != nil {
		b.Fatal(err)
	}
	rs.Cwd, rs.Home = "/home/ann/proj", "/home/ann"
	subjects := []registry.Subject{
		{Kind: registry.SubjectPath, Value: "src/pkg/a.go", Writes: true},
		{Kind: registry.SubjectPath, Value: "/home/ann/proj/src/pkg/b.go", Writes: true},
	}
	b.ReportAllocs()
	for b.Loop() {
		if v := rs.Evaluate("edit", subjects); v.Decision != Allow {
			b.Fatal(v)
		}
	}
}
