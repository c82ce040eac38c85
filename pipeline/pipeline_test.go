package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

type codedErr struct{ code string }

func (e codedErr) Error() string     { return "coded failure " + e.code }
func (e codedErr) ErrorCode() string { return e.code }

type resultErr struct{}

func (resultErr) Error() string { return "bad args" }
func (resultErr) Result() registry.Result {
	r := registry.ErrorResult(registry.CodeInvalidArgs, "bad args: /path: required")
	r.Error.Details = json.RawMessage(`{"issues":[{"pointer":"/path"}]}`)
	return r
}

func grant(reason string) Approver {
	return ApproverFunc(func(context.Context, *Execution, AskRequest) (Approval, error) {
		return Approval{AllowedOnce: reason == "", Reason: reason}, nil
	})
}

// TestDecisionPaths walks every way a call can end.
func TestDecisionPaths(t *testing.T) {
	type setup struct {
		p   *Pipeline
		rec *recorder
	}
	body := func(f registry.ExecuteFunc) func(*registry.Definition) {
		return func(d *registry.Definition) { d.Execute = f }
	}
	tests := []struct {
		name       string
		opts       []Option
		def        func(*registry.Definition)
		arrange    func(t *testing.T, p *Pipeline)
		in         Input
		ctx        func() (context.Context, context.CancelFunc)
		wantCode   string
		wantRun    bool
		wantInText string
	}{
		{name: "bare pipeline allows", wantRun: true, wantInText: "ok"},
		{name: "unknown tool", in: Input{Tool: "nope"}, wantCode: registry.CodeUnknownTool, wantInText: `unknown tool "nope"; available tools: echo`},
		{name: "invalid JSON", in: Input{Arguments: json.RawMessage(`{"a":}`)}, wantCode: registry.CodeInvalidArgs},
		{name: "duplicate keys", in: Input{Arguments: json.RawMessage(`{"a":1,"a":2}`)}, wantCode: registry.CodeInvalidArgs, wantInText: "duplicate"},
		{name: "arguments over the limit", opts: []Option{WithMaxArgumentBytes(8)}, in: Input{Arguments: json.RawMessage(`{"a":"0123456789"}`)}, wantCode: registry.CodeInvalidArgs, wantInText: "limit is 8"},
		{name: "invalid arguments are rejected before any policy", in: Input{Arguments: json.RawMessage(`{"a":NaN}`)},
			arrange: func(t *testing.T, p *Pipeline) {
				must(t, p.AddPre("spy", func(*Execution, func() PreDecision) PreDecision {
					t.Error("policy ran on invalid arguments")
					return AllowOnce()
				}, Last))
			}, wantCode: registry.CodeInvalidArgs},
		{name: "pre deny", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("plan-mode", func(*Execution, func() PreDecision) PreDecision { return Deny("plan mode is read-only") }, Last))
		}, wantCode: registry.CodeDenied, wantInText: `denied by tools/pre-execute "plan-mode": plan mode is read-only`},
		{name: "pre allow short-circuits later deny", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("yes", func(*Execution, func() PreDecision) PreDecision { return AllowOnce() }, Last))
			must(t, p.AddPre("no", func(*Execution, func() PreDecision) PreDecision { return Deny("no") }, Last))
		}, wantRun: true},
		{name: "listener tightens next's decision", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("strict", func(_ *Execution, next func() PreDecision) PreDecision {
				if d := next(); d.Action == PreAllowOnce {
					return Ask("strict wants a human")
				}
				return next()
			}, Last))
		}, wantCode: registry.CodeDenied, wantInText: "no approval channel"},
		{name: "zero decision denies", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("lazy", func(*Execution, func() PreDecision) PreDecision { return PreDecision{} }, Last))
		}, wantCode: registry.CodeDenied, wantInText: "no decision"},
		{name: "panicking listener denies", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("boom", func(*Execution, func() PreDecision) PreDecision { panic("kaboom") }, Last))
		}, wantCode: registry.CodeDenied, wantInText: "kaboom"},
		{name: "default decision deny", opts: []Option{WithDefaultDecision(Deny("locked down"))}, wantCode: registry.CodeDenied, wantInText: "locked down"},
		{name: "ask without approver", opts: []Option{WithDefaultDecision(Ask("confirm"))}, wantCode: registry.CodeDenied, wantInText: "no approval channel"},
		{name: "ask granted", opts: []Option{WithDefaultDecision(Ask("confirm"))}, in: Input{Approver: grant("")}, wantRun: true},
		{name: "ask rejected", opts: []Option{WithDefaultDecision(Ask("confirm"))}, in: Input{Approver: grant("user said no")}, wantCode: registry.CodeDenied, wantInText: "user said no"},
		{name: "ask errors", opts: []Option{WithDefaultDecision(Ask("confirm"))}, in: Input{Approver: ApproverFunc(func(context.Context, *Execution, AskRequest) (Approval, error) {
			return Approval{AllowedOnce: true}, errors.New("editor went away")
		})}, wantCode: registry.CodeDenied, wantInText: "editor went away"},
		{name: "ask panics", opts: []Option{WithDefaultDecision(Ask("confirm"))}, in: Input{Approver: ApproverFunc(func(context.Context, *Execution, AskRequest) (Approval, error) {
			panic("approver bug")
		})}, wantCode: registry.CodeDenied, wantInText: "approver bug"},
		{name: "grant after cancellation is not honoured", opts: []Option{WithDefaultDecision(Ask("confirm"))},
			ctx: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			in: Input{Approver: ApproverFunc(func(ctx context.Context, e *Execution, _ AskRequest) (Approval, error) {
				cancelOf[e.CallID()]()
				return Approval{AllowedOnce: true}, nil
			})}, wantCode: registry.CodeDenied, wantInText: "cancelled"},
		{name: "guard denies after allow", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPre("yes", func(*Execution, func() PreDecision) PreDecision { return AllowOnce() }, Last))
			must(t, p.AddGuard("roots", func(*Execution) string { return "path escapes the workspace" }))
		}, wantCode: registry.CodeDenied, wantInText: `denied by guard "roots": path escapes the workspace`},
		{name: "guard denies before the human is asked", opts: []Option{WithDefaultDecision(Ask("confirm"))},
			in: Input{Approver: ApproverFunc(func(context.Context, *Execution, AskRequest) (Approval, error) {
				panic("the human must not be asked")
			})},
			arrange: func(t *testing.T, p *Pipeline) {
				must(t, p.AddGuard("roots", func(*Execution) string { return "outside" }))
			}, wantCode: registry.CodeDenied, wantInText: `guard "roots"`},
		{name: "panicking guard denies", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddGuard("g", func(*Execution) string { panic("guard bug") }))
		}, wantCode: registry.CodeDenied, wantInText: "guard bug"},
		{name: "scope guard applies to its scope", in: Input{Scope: "s1"}, arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddScopeGuard("s1", "g", func(*Execution) string { return "not in s1" }))
		}, wantCode: registry.CodeDenied, wantInText: "not in s1"},
		{name: "scope guard ignores other scopes", in: Input{Scope: "s2"}, arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddScopeGuard("s1", "g", func(*Execution) string { return "not in s1" }))
		}, wantRun: true},
		{name: "tool error", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.Result{}, errors.New("disk full")
		}), wantCode: registry.CodeToolError, wantInText: "disk full"},
		{name: "tool error with a code", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.Result{}, fmt.Errorf("wrapped: %w", codedErr{registry.CodeInvalidArgs})
		}), wantCode: registry.CodeInvalidArgs},
		{name: "tool error with its own result", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.Result{}, resultErr{}
		}), wantCode: registry.CodeInvalidArgs, wantInText: "/path: required"},
		{name: "tool panic", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			panic("nil map")
		}), wantCode: registry.CodeToolError, wantInText: "nil map"},
		{name: "tool without body", def: body(nil), wantCode: registry.CodeToolError, wantInText: "no body"},
		{name: "tool-made isError gets a code", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.Result{IsError: true, Content: []presentation.Content{presentation.Text("it broke")}}, nil
		}), wantCode: registry.CodeToolError, wantInText: "it broke"},
		{name: "per-tool timeout", def: func(d *registry.Definition) {
			d.TimeoutMs = 20
			d.Execute = func(ctx context.Context, _ registry.Call, _ json.RawMessage) (registry.Result, error) {
				<-ctx.Done()
				return registry.Result{}, ctx.Err()
			}
		}, wantCode: registry.CodeTimeout, wantInText: "timed out after 20ms"},
		{name: "context deadline", ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, def: body(func(ctx context.Context, _ registry.Call, _ json.RawMessage) (registry.Result, error) {
			<-ctx.Done()
			return registry.Result{}, ctx.Err()
		}), wantCode: registry.CodeTimeout},
		{name: "already cancelled", ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, wantCode: registry.CodeCancelled},
		{name: "post keep", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPost("k", func(_ *Execution, _ registry.Result, next func() PostDecision) PostDecision { return next() }, Last))
		}, wantRun: true, wantInText: "ok"},
		{name: "post replace", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPost("redact", func(*Execution, registry.Result, func() PostDecision) PostDecision {
				return Replace(presentation.Text("[redacted]"))
			}, Last))
		}, wantRun: true, wantInText: "[redacted]"},
		{name: "post block", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPost("lint", func(*Execution, registry.Result, func() PostDecision) PostDecision {
				return Block("the edit broke the build; fix the syntax error first")
			}, Last))
		}, wantRun: true, wantCode: registry.CodeDenied, wantInText: "fix the syntax error first"},
		{name: "post panic fails closed", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddPost("redact", func(*Execution, registry.Result, func() PostDecision) PostDecision { panic("oops") }, Last))
		}, wantRun: true, wantCode: registry.CodeDenied, wantInText: "could not be checked"},
		{name: "invalid UTF-8 result", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.TextResult("bad \xff byte"), nil
		}), wantCode: registry.CodeInvalidResult, wantInText: "UTF-8"},
		{name: "invalid structured result", def: body(func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			r := registry.TextResult("x")
			r.Structured = json.RawMessage(`{"a":`)
			return r, nil
		}), wantCode: registry.CodeInvalidResult, wantInText: "not valid JSON"},
		{name: "wrapper panic", arrange: func(t *testing.T, p *Pipeline) {
			must(t, p.AddWrapper("w", func(context.Context, *Execution, func(context.Context) registry.Result) registry.Result {
				panic("wrapper bug")
			}, Last))
		}, wantCode: registry.CodeToolError, wantInText: "wrapper bug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			def := rec.def("echo")
			if tt.def != nil {
				tt.def(def)
			}
			logOpt, _ := quiet()
			p := New(tools(def), append([]Option{logOpt}, tt.opts...)...)
			if tt.arrange != nil {
				tt.arrange(t, p)
			}
			in := tt.in
			if in.Tool == "" {
				in.Tool = "echo"
			}
			in.CallID = tt.name
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			cancelMu.Lock()
			cancelOf[in.CallID] = cancel
			cancelMu.Unlock()
			out := p.Execute(ctx, in)
			if got := errCode(t, out); got != tt.wantCode {
				t.Errorf("code = %q, want %q (result %+v)", got, tt.wantCode, out.Result)
			}
			if ran := rec.count() > 0; ran != tt.wantRun && tt.def == nil {
				t.Errorf("tool ran = %v, want %v", ran, tt.wantRun)
			}
			if !strings.Contains(string(out.JSON), jsonText(tt.wantInText)) {
				t.Errorf("result %s does not contain %q", out.JSON, tt.wantInText)
			}
			if out.Execution == nil || out.Execution.CallID() != in.CallID {
				t.Errorf("outcome execution = %+v", out.Execution)
			}
		})
	}
}

var (
	cancelMu sync.Mutex
	cancelOf = map[string]context.CancelFunc{}
)

func jsonText(s string) string {
	b, _ := marshal(s)
	return strings.Trim(string(b), `"`)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeniedDetailsNameTheStage(t *testing.T) {
	p := New(tools((&recorder{}).def("echo")))
	must(t, p.AddGuard("roots", func(*Execution) string { return "outside" }))
	out := p.Execute(context.Background(), Input{Tool: "echo"})
	var de *DeniedError
	if !errors.As(out.Err, &de) || de.Stage != StageGuard || de.By != "roots" || de.Reason != "outside" {
		t.Fatalf("Err = %#v", out.Err)
	}
	if got := string(out.Result.Error.Details); got != `{"stage":"guard","by":"roots"}` {
		t.Errorf("details = %s", got)
	}
}

func TestUnknownToolNamesOnlyVisibleTools(t *testing.T) {
	ft := &fakeTools{
		global: []*registry.Definition{{Name: "read"}, {Name: "bash"}},
		scoped: map[string][]*registry.Definition{"secret": {{Name: "launch_missiles"}}},
	}
	p := New(ft)
	out := p.Execute(context.Background(), Input{Tool: "launch_missiles", Scope: "public"})
	var nf *ToolNotFoundError
	if !errors.As(out.Err, &nf) {
		t.Fatalf("Err = %#v", out.Err)
	}
	if strings.Contains(string(out.JSON), "launch_missiles\",") || strings.Contains(out.Result.Error.Message, "available tools: bash, read, launch") {
		t.Errorf("message leaks a hidden tool: %s", out.Result.Error.Message)
	}
	if want := `unknown tool "launch_missiles"; available tools: bash, read`; out.Result.Error.Message != want {
		t.Errorf("message = %q, want %q", out.Result.Error.Message, want)
	}
	if out := p.Execute(context.Background(), Input{Tool: "launch_missiles", Scope: "secret"}); out.Result.Error.Code == registry.CodeUnknownTool {
		t.Errorf("the secret scope cannot call its own tool: %+v", out.Result)
	}
}

// TestApprovalBindsToFrozenArguments: what the approver saw is byte for
// byte what the tool got, whatever the approver or a listener does to
// the bytes it was given.
func TestApprovalBindsToFrozenArguments(t *testing.T) {
	rec := &recorder{}
	p := New(tools(rec.def("edit")), WithDefaultDecision(Ask("edits need approval")))
	must(t, p.AddPre("vandal", func(e *Execution, next func() PreDecision) PreDecision {
		a := e.Arguments()
		copy(a, `{"path":"/etc/passwd"}`)
		return next()
	}, Last))
	var seen []byte
	approver := ApproverFunc(func(_ context.Context, e *Execution, req AskRequest) (Approval, error) {
		seen = bytes.Clone(req.Arguments)
		if req.Reason != "edits need approval" || req.AskedBy != DefaultDecider {
			t.Errorf("request = %+v", req)
		}
		for i := range req.Arguments {
			req.Arguments[i] = 'x'
		}
		return Approval{AllowedOnce: true}, nil
	})
	raw := []byte(`{ "path" : "a.txt", "new" : "x" }`)
	out := p.Execute(context.Background(), Input{Tool: "edit", Arguments: raw, Approver: approver})
	copy(raw, "garbage") // the caller reusing its buffer changes nothing either
	if out.Result.IsError {
		t.Fatalf("result = %+v", out.Result)
	}
	if want := `{"path":"a.txt","new":"x"}`; string(seen) != want {
		t.Errorf("approver saw %s, want %s", seen, want)
	}
	if got := rec.last(); !bytes.Equal(got, seen) {
		t.Errorf("tool got %s, approver saw %s", got, seen)
	}
	if got := out.Execution.ArgumentsString(); got != string(seen) {
		t.Errorf("execution records %s, approver saw %s", got, seen)
	}
}

func TestDefinitionChangesAfterMaterialisationDoNotAffectTheCall(t *testing.T) {
	rec := &recorder{}
	def := rec.def("t")
	p := New(tools(def))
	must(t, p.AddPre("swap", func(e *Execution, next func() PreDecision) PreDecision {
		d, _ := e.Definition()
		d.Execute = func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
			return registry.TextResult("hijacked"), nil
		}
		return next()
	}, Last))
	// Neither this call nor a later one runs what a hook swapped in.
	for i := range 2 {
		out := p.Execute(context.Background(), Input{Tool: "t"})
		if rec.count() != i+1 || out.Result.Content[0].Text != "ok" {
			t.Errorf("call %d: the swapped body ran: %+v", i, out.Result)
		}
	}
}

func TestSubjectsComputedOnceAndCopied(t *testing.T) {
	calls := 0
	def := (&recorder{}).def("t")
	def.Subjects = func(c registry.Call) []registry.Subject {
		calls++
		return []registry.Subject{{Kind: registry.SubjectPath, Value: "a.txt"}}
	}
	p := New(tools(def))
	must(t, p.AddGuard("g1", func(e *Execution) string {
		e.Subjects()[0].Value = "/etc/passwd"
		return ""
	}))
	must(t, p.AddGuard("g2", func(e *Execution) string {
		if got := e.Subjects()[0].Value; got != "a.txt" {
			return "subject changed to " + got
		}
		return ""
	}))
	if out := p.Execute(context.Background(), Input{Tool: "t"}); out.Result.IsError || calls != 1 {
		t.Errorf("result %+v, Subjects hook called %d times", out.Result, calls)
	}
}

func TestSubjectsHookPanicIsContained(t *testing.T) {
	def := (&recorder{}).def("t")
	def.Subjects = func(registry.Call) []registry.Subject { panic("subjects bug") }
	logOpt, _ := quiet()
	out := New(tools(def), logOpt).Execute(context.Background(), Input{Tool: "t"})
	if code := errCode(t, out); code != registry.CodeToolError {
		t.Errorf("code = %q", code)
	}
}

func TestWrappersOutermostFirstAndContextFlows(t *testing.T) {
	type key struct{}
	var order []string
	rec := &recorder{}
	p := New(tools(rec.def("t")))
	wrap := func(name string) Wrapper {
		return func(ctx context.Context, e *Execution, next func(context.Context) registry.Result) registry.Result {
			order = append(order, name+">")
			r := next(context.WithValue(ctx, key{}, name))
			order = append(order, "<"+name)
			return r
		}
	}
	must(t, p.AddWrapper("b", wrap("b"), Last))
	must(t, p.AddWrapper("a", wrap("a"), First))
	must(t, p.AddWrapper("c", wrap("c"), After("b")))
	started := 0
	out := p.Execute(context.Background(), Input{Tool: "t", OnStart: func(e *Execution) {
		started++
		order = append(order, "start")
	}})
	if out.Result.IsError || !out.Dispatched || started != 1 {
		t.Fatalf("result %+v dispatched %v started %d", out.Result, out.Dispatched, started)
	}
	if got, want := strings.Join(order, " "), "a> b> c> start <c <b <a"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
	if got := rec.ctxs[0].Value(key{}); got != "c" {
		t.Errorf("the tool's context came from %v, want the innermost wrapper", got)
	}
}

func TestWrapperCanShortCircuitButNotRunTwice(t *testing.T) {
	rec := &recorder{}
	p := New(tools(rec.def("t")))
	must(t, p.AddWrapper("cache", func(ctx context.Context, e *Execution, next func(context.Context) registry.Result) registry.Result {
		return registry.TextResult("cached")
	}, Last))
	out := p.Execute(context.Background(), Input{Tool: "t"})
	if out.Result.Content[0].Text != "cached" || out.Dispatched || rec.count() != 0 {
		t.Errorf("short circuit: %+v dispatched=%v", out.Result, out.Dispatched)
	}
	p.RemoveWrapper("cache")
	must(t, p.AddWrapper("twice", func(ctx context.Context, e *Execution, next func(context.Context) registry.Result) registry.Result {
		next(ctx)
		return next(ctx)
	}, Last))
	out = p.Execute(context.Background(), Input{Tool: "t"})
	if rec.count() != 1 || !out.Result.IsError {
		t.Errorf("twice: tool ran %d times, result %+v", rec.count(), out.Result)
	}
}

func TestDeniedCallsDoNotStart(t *testing.T) {
	p := New(tools((&recorder{}).def("t")), WithDefaultDecision(Deny("no")))
	out := p.Execute(context.Background(), Input{Tool: "t", OnStart: func(*Execution) { t.Error("OnStart on a denied call") }})
	if out.Dispatched {
		t.Error("denied call dispatched")
	}
}

// TestToolIgnoringContext: Execute returns promptly with CANCELLED or
// TIMEOUT although the tool never looks at its context; the body's
// goroutine is counted as a straggler until it returns.
func TestToolIgnoringContext(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  float64
		cancel   bool
		wantCode string
	}{
		{"cancel", 0, true, registry.CodeCancelled},
		{"timeout", 10, false, registry.CodeTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				entered := make(chan struct{})
				def := &registry.Definition{Name: "stubborn", TimeoutMs: tc.timeout,
					Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
						close(entered)
						<-release // ignores ctx
						return registry.TextResult("late"), nil
					}}
				p := New(tools(def))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel {
					go func() { <-entered; cancel() }()
				}
				out := p.Execute(ctx, Input{Tool: "stubborn"})
				if code := errCode(t, out); code != tc.wantCode {
					t.Fatalf("code = %q, want %q", code, tc.wantCode)
				}
				if got := p.Stragglers(); got != 1 {
					t.Errorf("Stragglers = %d while the tool runs, want 1", got)
				}
				close(release)
				synctest.Wait() // the released body has returned
				if got := p.Stragglers(); got != 0 {
					t.Errorf("Stragglers = %d after the tool returned, want 0", got)
				}
			})
		})
	}
}

func TestTokensUniqueAcrossGoroutines(t *testing.T) {
	p := New(tools((&recorder{}).def("t")))
	const workers, each = 8, 200
	tokens := make(chan Token, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				tokens <- p.Execute(context.Background(), Input{Tool: "t"}).Execution.Token()
			}
		})
	}
	wg.Wait()
	close(tokens)
	seen := map[Token]bool{}
	for tok := range tokens {
		if tok.IsZero() || seen[tok] {
			t.Fatalf("token %v zero or repeated", tok)
		}
		seen[tok] = true
	}
	var zero Token
	if _, ok := (&Execution{}).Parent(); ok || !zero.IsZero() {
		t.Error("zero token is not 'none'")
	}
}

func TestParentToken(t *testing.T) {
	p := New(tools((&recorder{}).def("t")))
	parent := p.Execute(context.Background(), Input{Tool: "t"}).Execution.Token()
	child := p.Execute(context.Background(), Input{Tool: "t", Parent: parent}).Execution
	if got, ok := child.Parent(); !ok || got != parent || got == child.Token() {
		t.Errorf("Parent() = %v, %v; want %v", got, ok, parent)
	}
}

// TestObserversCannotMutate: an observer scribbling over everything it can
// reach changes neither what later observers see nor the outcome.
func TestObserversCannotMutate(t *testing.T) {
	def := (&recorder{}).def("t")
	def.Execute = func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
		exit := 2
		old := "a"
		r := registry.TextResult("orig")
		r.Structured = json.RawMessage(`{"n":1}`)
		r.View = &presentation.ResultView{Card: &presentation.TerminalCard{Output: "out", ExitCode: &exit}}
		_ = old
		return r, nil
	}
	logOpt, logs := quiet()
	p := New(tools(def), logOpt)
	var snapshots []string
	snap := func(e *Execution, r registry.Result) error {
		b, err := json.Marshal(struct {
			Args string
			R    registry.Result
		}{e.ArgumentsString(), r})
		snapshots = append(snapshots, string(b))
		return err
	}
	must(t, p.AddObserver("first", snap))
	must(t, p.AddObserver("vandal", func(e *Execution, r registry.Result) error {
		r.Content[0].Text = "changed"
		r.Structured[2] = 'X'
		*r.View.Card.(*presentation.TerminalCard).ExitCode = 99
		r.View.Card.(*presentation.TerminalCard).Output = "changed"
		a := e.Arguments()
		copy(a, "XXXX")
		panic("observer bug")
	}))
	must(t, p.AddObserver("failing", func(*Execution, registry.Result) error { return errors.New("disk full") }))
	must(t, p.AddObserver("last", snap))
	out := p.Execute(context.Background(), Input{Tool: "t", Arguments: json.RawMessage(`{"a":1}`)})
	if len(snapshots) != 2 || snapshots[0] != snapshots[1] {
		t.Fatalf("observers saw different things:\n%s", strings.Join(snapshots, "\n"))
	}
	if out.Result.Content[0].Text != "orig" || *out.Result.View.Card.(*presentation.TerminalCard).ExitCode != 2 ||
		string(out.Result.Structured) != `{"n":1}` || out.Execution.ArgumentsString() != `{"a":1}` {
		t.Errorf("outcome changed: %+v", out.Result)
	}
	if l := logs.String(); !strings.Contains(l, "observer bug") || !strings.Contains(l, "disk full") {
		t.Errorf("observer failures not logged:\n%s", l)
	}
}

func TestResultFreezing(t *testing.T) {
	tests := []struct {
		name    string
		in      registry.Result
		wantErr bool
		check   func(t *testing.T, r registry.Result)
	}{
		{name: "nil content becomes empty", in: registry.Result{}, check: func(t *testing.T, r registry.Result) {
			if r.Content == nil || len(r.Content) != 0 {
				t.Errorf("content = %#v", r.Content)
			}
		}},
		{name: "error implies isError", in: registry.Result{Error: &registry.ToolError{Code: "X", Message: "m"}}, check: func(t *testing.T, r registry.Result) {
			if !r.IsError || r.Content[0].Text != "m" {
				t.Errorf("result = %+v", r)
			}
		}},
		{name: "structured compacted and HTML kept", in: registry.Result{Structured: json.RawMessage(`{ "a" : "<b>&" }`)}, check: func(t *testing.T, r registry.Result) {
			if string(r.Structured) != `{"a":"<b>&"}` {
				t.Errorf("structured = %s", r.Structured)
			}
		}},
		{name: "diff card survives", in: registry.Result{View: &presentation.ResultView{Card: &presentation.DiffCard{Diffs: []presentation.FileDiff{{Path: "/a", NewText: "x"}}}}}, check: func(t *testing.T, r registry.Result) {
			if d, ok := r.View.Card.(*presentation.DiffCard); !ok || d.Diffs[0].OldText != nil || d.Diffs[0].Path != "/a" {
				t.Errorf("view = %#v", r.View.Card)
			}
		}},
		{name: "invalid UTF-8 in a card", in: registry.Result{View: &presentation.ResultView{Card: &presentation.GenericCard{Title: "\xff"}}}, wantErr: true},
		{name: "invalid details", in: registry.Result{Error: &registry.ToolError{Code: "X", Details: json.RawMessage("{")}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, data, err := freeze(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("freeze err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var back registry.Result
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := marshal(back)
			if !bytes.Equal(again, data) {
				t.Errorf("frozen bytes do not round-trip: %s vs %s", data, again)
			}
			tt.check(t, r)
		})
	}
}

// A typed tool's arguments are checked before any policy runs: nobody is
// asked to approve a call the tool would refuse, and it is not dispatched.
func TestTypedArgumentsCheckedBeforePolicy(t *testing.T) {
	type args struct {
		Path string `json:"path"`
	}
	ran := false
	def := registry.MustDefine(registry.Spec[args]{Name: "typed", Description: "Typed."},
		func(context.Context, registry.Call, args) (registry.Result, error) {
			ran = true
			return registry.TextResult("ran"), nil
		})
	p := New(tools(def), WithDefaultDecision(Ask("confirm")))
	asked, started := 0, false
	approver := ApproverFunc(func(context.Context, *Execution, AskRequest) (Approval, error) {
		asked++
		return Approval{AllowedOnce: true}, nil
	})
	out := p.Execute(context.Background(), Input{Tool: "typed", Arguments: json.RawMessage(`{"path":5,"bogus":1}`),
		Approver: approver, OnStart: func(*Execution) { started = true }})
	if !out.Result.IsError || out.Result.Error.Code != registry.CodeInvalidArgs {
		t.Fatalf("result %+v, want INVALID_ARGS", out.Result)
	}
	if asked != 0 || started || ran || out.Dispatched {
		t.Errorf("asked %d, started %v, ran %v, dispatched %v; want none", asked, started, ran, out.Dispatched)
	}
	if d := string(out.Result.Error.Details); !strings.Contains(d, "/bogus") || !strings.Contains(d, "/path") {
		t.Errorf("details %s do not list every issue", d)
	}
	// Valid arguments are asked for and run.
	out = p.Execute(context.Background(), Input{Tool: "typed", Arguments: json.RawMessage(`{"path":"a"}`), Approver: approver})
	if out.Result.IsError || asked != 1 || !ran {
		t.Errorf("valid call: %+v, asked %d, ran %v", out.Result, asked, ran)
	}
}
