package task_test

import (
	"context"
	"encoding/json"
	"github.com/dsh-tools/dshd/host"
	"testing"

	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/model/task"
	"github.com/dsh-tools/dshd/registry"
)

// fakeCall is a registry.Call outside the pipeline.
type fakeCall struct{ args json.RawMessage }

func (c fakeCall) ToolName() string           { return task.Name }
func (c fakeCall) CallID() string             { return "c1" }
func (c fakeCall) Arguments() json.RawMessage { return c.args }
func (c fakeCall) Scope() string              { return "s" }
func (c fakeCall) Host() host.Host            { return nil }

// FuzzArguments feeds arbitrary arguments to the task tool outside a turn:
// it must always answer with an isError result (invalid arguments, an
// unsupported schema, or no pipeline/turn to run in), never panic, and
// its presenter must always give a title.
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		`{"prompt":"x"}`,
		`{"prompt":"x","name":"n","tools":{"allow":["read"],"deny":["bash"]},"maxSteps":3}`,
		`{"prompt":"x","outputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`,
		`{"prompt":"x","outputSchema":{"type":"string"}}`,
		`{"prompt":"","tools":{"allow":null}}`,
		`{"prompt":1}`, `[]`, `null`, `{`, ``,
	} {
		f.Add(seed)
	}
	reg := registry.New()
	loop := model.New(model.Options{Provider: script.New(&script.Script{Turns: []script.Turn{}}), Registry: reg, Logger: looptest.Quiet()})
	def := task.New(task.Options{Loop: loop, Registry: reg})
	f.Fuzz(func(t *testing.T, args string) {
		call := fakeCall{json.RawMessage(args)}
		res, err := def.Execute(context.Background(), call, call.args)
		if err != nil {
			t.Fatalf("Execute returned an error: %v", err)
		}
		if !res.IsError || res.Error == nil || res.Error.Code == "" {
			t.Fatalf("result outside a turn = %+v, want a coded isError result", res)
		}
		if v := def.PresentCall(call); v.Title == "" {
			t.Fatal("empty title")
		}
	})
}
