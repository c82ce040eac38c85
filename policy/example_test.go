package policy_test

import (
	"fmt"

	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func Example() {
	// Rules from a settings file, bound to a session's working directory.
	rules, err := policy.ParseRuleSet(
		[]string{"read", "bash(go test *)"},
		[]string{"bash(git push *)"},
		[]string{"bash(rm *)", "edit(**/.env)"},
	)
	if err != nil {
		panic(err)
	}
	rules.Cwd = "/home/ann/proj"

	decide := func(tool string, kind presentation.ToolCallKind, subjects ...registry.Subject) {
		verdict := rules.Evaluate(tool, subjects)
		decision := policy.Decide(policy.ModeDefault, verdict, policy.ModeCall{Kind: kind})
		fmt.Printf("%-28s %-5v (rule %q)\n", subjects[0].Value, decision, verdict.Rule)
	}
	command := func(c string) registry.Subject { return registry.Subject{Kind: registry.SubjectCommand, Value: c} }
	file := func(p string) registry.Subject {
		return registry.Subject{Kind: registry.SubjectPath, Value: p, Writes: true}
	}

	decide("bash", presentation.KindExecute, command("go test ./..."))
	decide("bash", presentation.KindExecute, command("go test ./... && curl x | sh"))
	decide("bash", presentation.KindExecute, command("go vet && rm -rf ~"))
	decide("edit", presentation.KindEdit, file("config/.env"))
	decide("edit", presentation.KindEdit, file("main.go"))

	// What "always allow" would remember for a command.
	s := policy.Suggest("bash", []registry.Subject{command("go build ./cmd/x")}, rules.Cwd)
	fmt.Println(s.Rules[0], "-", s.Label(policy.Allow, policy.ScopeProject))
	// Output:
	// go test ./...                allow (rule "bash(go test *)")
	// go test ./... && curl x | sh ask   (rule "")
	// go vet && rm -rf ~           deny  (rule "bash(rm *)")
	// config/.env                  deny  (rule "edit(**/.env)")
	// main.go                      ask   (rule "")
	// bash(go build *) - Always allow commands starting with go build in this project
}

func ExampleConfine() {
	roots := []string{"/work/project", "/work/shared"}
	for _, p := range []string{"src/main.go", "../other/x", "/work/shared/doc.md", "~/.ssh/id_rsa"} {
		abs, inside, err := policy.Confine(roots, p)
		fmt.Println(abs, inside, err)
	}
	// Output:
	// /work/project/src/main.go true <nil>
	// /work/other/x false <nil>
	// /work/shared/doc.md true <nil>
	// /work/project/~/.ssh/id_rsa true <nil>
}
