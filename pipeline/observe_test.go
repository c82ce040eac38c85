package pipeline

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// TestObserversSeeEveryOutcome: tools/result sees failures before
// dispatch too, so the durable log records every call.
func TestObserversSeeEveryOutcome(t *testing.T) {
	logOpt, _ := quiet()
	p := New(tools((&recorder{}).def("t")), logOpt)
	var codes []string
	must(t, p.AddObserver("log", func(e *Execution, r registry.Result) error {
		code := "ok"
		if r.IsError {
			code = r.Error.Code
		}
		codes = append(codes, code)
		return nil
	}))
	must(t, p.AddGuard("g", func(e *Execution) string {
		if e.ArgumentsString() == `{"deny":true}` {
			return "no"
		}
		return ""
	}))
	ctx := context.Background()
	p.Execute(ctx, Input{Tool: "t"})
	p.Execute(ctx, Input{Tool: "missing"})
	p.Execute(ctx, Input{Tool: "t", Arguments: json.RawMessage(`{`)})
	p.Execute(ctx, Input{Tool: "t", Arguments: json.RawMessage(`{"deny":true}`)})
	p.Execute(ctx, Input{Tool: "t", OnStart: func(*Execution) { panic("OnStart bug") }})
	want := []string{"ok", registry.CodeUnknownTool, registry.CodeInvalidArgs, registry.CodeDenied, "ok"}
	if len(codes) != len(want) {
		t.Fatalf("observed %v, want %v", codes, want)
	}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("observed %v, want %v", codes, want)
			break
		}
	}
}

// FuzzFreeze: whatever a tool returns, the frozen outcome is valid JSON
// that decodes to exactly the frozen result, or an INVALID_RESULT.
func FuzzFreeze(f *testing.F) {
	f.Add("ok", "", []byte(nil), false)
	f.Add("bad \xff", "ctx", []byte(`{"a":1}`), true)
	f.Add("<html>&", "\u2028", []byte(` [1, "x"] `), false)
	f.Add("", "", []byte(`{"a":`), true)
	f.Add("x", "y", []byte(`null`), false)
	f.Fuzz(func(t *testing.T, text, extra string, structured []byte, isError bool) {
		in := registry.Result{
			Content:           []presentation.Content{presentation.Text(text)},
			IsError:           isError,
			Structured:        structured,
			AdditionalContext: extra,
			View:              &presentation.ResultView{Card: &presentation.TerminalCard{Output: text}},
		}
		r, data, err := freeze(in)
		if err != nil {
			if utf8.ValidString(text) && utf8.ValidString(extra) && (len(structured) == 0 || json.Valid(structured)) {
				t.Fatalf("valid result rejected: %v", err)
			}
			return
		}
		var back registry.Result
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("frozen bytes do not decode: %v", err)
		}
		again, _ := marshal(back)
		if string(again) != string(data) {
			t.Fatalf("not a fixed point: %s vs %s", data, again)
		}
		if r.Content[0].Text != text || r.AdditionalContext != extra || r.IsError != isError {
			t.Fatalf("frozen result changed the values: %+v", r)
		}
	})
}
