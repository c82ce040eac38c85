package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
