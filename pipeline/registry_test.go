package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

var _ pipeline.Tools = (*registry.Registry)(nil)

type readArgs struct {
	Path  string `json:"path" desc:"file to read"`
	Limit *int   `json:"limit,omitempty" desc:"lines" min:"1"`
}

// TestWithRegistry runs typed tools of the real registry: argument
// violations become INVALID_ARGS results with the registry's details, and
// result cards survive freezing through the presentation codec.
func TestWithRegistry(t *testing.T) {
	read := registry.MustDefine(registry.Spec[readArgs]{Name: "read", Description: "Reads a file.", Kind: presentation.KindRead},
		func(_ context.Context, _ registry.Call, a readArgs) (registry.Result, error) {
			r := registry.TextResult("contents of " + a.Path)
			r.View = &presentation.ResultView{Card: &presentation.GenericCard{Title: "Read " + a.Path}}
			return r, nil
		})
	reg := registry.New()
	if err := reg.SetGlobal(read); err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(reg)

	out := p.Execute(context.Background(), pipeline.Input{Tool: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	if out.Result.IsError {
		t.Fatalf("valid call failed: %s", out.JSON)
	}
	if card, ok := out.Result.View.Card.(*presentation.GenericCard); !ok || card.Title != "Read a.txt" {
		t.Errorf("card = %#v", out.Result.View)
	}

	out = p.Execute(context.Background(), pipeline.Input{Tool: "read", Arguments: json.RawMessage(`{"limit":0}`)})
	if !out.Result.IsError || out.Result.Error.Code != registry.CodeInvalidArgs || len(out.Result.Error.Details) == 0 {
		t.Fatalf("invalid call: %s", out.JSON)
	}
	if !strings.Contains(out.Result.Content[0].Text, "/limit") {
		t.Errorf("message does not name the bad field: %s", out.Result.Content[0].Text)
	}

	out = p.Execute(context.Background(), pipeline.Input{Tool: "write"})
	if out.Result.Error.Code != registry.CodeUnknownTool || !strings.Contains(out.Result.Error.Message, "available tools: read") {
		t.Errorf("unknown tool: %s", out.JSON)
	}
}
