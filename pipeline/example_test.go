package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/registry"
)

// oneTool is the smallest pipeline.Tools: *registry.Registry is the real
// one.
type oneTool struct{ def *registry.Definition }

func (o oneTool) Lookup(_, name string) (*registry.Definition, bool) {
	return o.def, name == o.def.Name
}
func (o oneTool) Visible(string) []*registry.Definition { return []*registry.Definition{o.def} }

func Example() {
	write := &registry.Definition{
		Name: "write",
		Kind: "edit",
		Execute: func(_ context.Context, _ registry.Call, args json.RawMessage) (registry.Result, error) {
			return registry.TextResult("wrote " + string(args)), nil
		},
		Subjects: func(c registry.Call) []registry.Subject {
			var a struct{ Path string }
			_ = json.Unmarshal(c.Arguments(), &a)
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: true}}
		},
	}
	p := pipeline.New(oneTool{write})

	// A mode: mutations need a human.
	_ = p.AddPre("mode", func(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
		if exec.Kind().Mutates() {
			return pipeline.Ask("writes a file")
		}
		return next()
	}, pipeline.Last)
	// A guard can only deny.
	_ = p.AddGuard("roots", func(exec *pipeline.Execution) string {
		for _, s := range exec.Subjects() {
			if !strings.HasPrefix(s.Value, "/work/") {
				return s.Value + " is outside the workspace"
			}
		}
		return ""
	})
	human := pipeline.ApproverFunc(func(_ context.Context, _ *pipeline.Execution, req pipeline.AskRequest) (pipeline.Approval, error) {
		fmt.Printf("asked (%s): %s\n", req.Reason, req.Arguments)
		return pipeline.Approval{AllowedOnce: true}, nil
	})

	for _, args := range []string{`{"path": "/work/a.txt"}`, `{"path": "/etc/passwd"}`, `{"path": NaN}`} {
		out := p.Execute(context.Background(), pipeline.Input{
			Tool: "write", CallID: "c1", Arguments: json.RawMessage(args), Approver: human,
		})
		fmt.Println(out.Result.IsError, out.Result.Content[0].Text)
	}
	// Output:
	// asked (writes a file): {"path":"/work/a.txt"}
	// false wrote {"path":"/work/a.txt"}
	// true denied by guard "roots": /etc/passwd is outside the workspace
	// true invalid arguments at byte 9: invalid character 'N' looking for a value
}

// session is a host.Host of which the example needs the working directory
// only; the bridge's host implements every method.
type session struct {
	host.Host
	cwd string
}

func (s session) Cwd() string { return s.cwd }

// A typed tool reaches the session that runs it through the call, as
// go-sdk's handlers reach theirs through the request.
func Example_host() {
	type pwdArgs struct {
		Verbose *bool `json:"verbose,omitempty" desc:"Say more"`
	}
	pwd := registry.MustDefine(registry.Spec[pwdArgs]{
		Name: "pwd", Description: "Print the session's working directory.",
	}, func(_ context.Context, call registry.Call, a pwdArgs) (registry.Result, error) {
		h := call.Host()
		if h == nil {
			return registry.ErrorResult(registry.CodeToolError, "pwd needs a session"), nil
		}
		if a.Verbose != nil && *a.Verbose {
			return registry.TextResult("the working directory is " + h.Cwd()), nil
		}
		return registry.TextResult(h.Cwd()), nil
	})
	p := pipeline.New(oneTool{pwd})
	for _, in := range []pipeline.Input{
		{Tool: "pwd", CallID: "c1", Arguments: json.RawMessage(`{"verbose":true}`), Host: session{cwd: "/work/project"}},
		{Tool: "pwd", CallID: "c2"},
	} {
		out := p.Execute(context.Background(), in)
		fmt.Println(out.Result.IsError, out.Result.Content[0].Text)
	}
	// Output:
	// false the working directory is /work/project
	// true pwd needs a session
}
