package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/registry"
)

// TestGuardMonotonicity is a property test: over random listener orders,
// random waterfall decisions, random guard sets (global and scoped) and
// random approver answers, a call runs exactly when the waterfall's
// effective decision is allow-once (or ask, granted) and no guard gave a
// reason. In particular no listener, approver or later guard can undo a
// guard's denial.
func TestGuardMonotonicity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		nPre, nGuard := r.IntN(6), r.IntN(6)
		type pre struct {
			name   string
			action PreAction // 0 = call next()
		}
		pres := make([]pre, nPre)
		for j := range pres {
			pres[j] = pre{name: fmt.Sprintf("pre%d", j), action: PreAction(r.IntN(4))}
		}
		r.Shuffle(len(pres), func(a, b int) { pres[a], pres[b] = pres[b], pres[a] })
		guardReasons := make([]string, nGuard)
		scoped := make([]bool, nGuard)
		for j := range guardReasons {
			if r.IntN(3) == 0 {
				guardReasons[j] = fmt.Sprintf("guard%d says no", j)
			}
			scoped[j] = r.IntN(2) == 0
		}
		defaultAction := []PreDecision{AllowOnce(), Deny("default no"), Ask("default ask")}[r.IntN(3)]
		approverGrants := r.IntN(2) == 0
		hasApprover := r.IntN(4) != 0

		rec := &recorder{}
		p := New(tools(rec.def("t")), WithDefaultDecision(defaultAction), WithBreakerThreshold(0))
		// Register in a random way: some appended, some placed first.
		for _, l := range pres {
			dec := l.action
			fn := func(_ *Execution, next func() PreDecision) PreDecision {
				switch dec {
				case PreAllowOnce:
					return AllowOnce()
				case PreDeny:
					return Deny("listener no")
				case PreAsk:
					return Ask("listener ask")
				}
				return next()
			}
			must(t, p.AddPre(l.name, fn, Last))
		}
		for j, reason := range guardReasons {
			g := func(*Execution) string { return reason }
			if scoped[j] {
				must(t, p.AddScopeGuard("s", fmt.Sprintf("g%d", j), g))
			} else {
				must(t, p.AddGuard(fmt.Sprintf("g%d", j), g))
			}
		}
		in := Input{Tool: "t", Scope: "s"}
		if hasApprover {
			in.Approver = grant(map[bool]string{true: "", false: "no"}[approverGrants])
		}
		out := p.Execute(context.Background(), in)

		// The model: the first listener that does not defer decides.
		effective := defaultAction.Action
		for _, l := range pres {
			if l.action != 0 {
				effective = l.action
				break
			}
		}
		anyGuard := false
		for _, reason := range guardReasons {
			anyGuard = anyGuard || reason != ""
		}
		wantRun := !anyGuard && (effective == PreAllowOnce || (effective == PreAsk && hasApprover && approverGrants))
		if ran := rec.count() == 1; ran != wantRun {
			t.Fatalf("case %d: ran=%v want %v (pres %+v, guards %q, default %v, approver %v/%v): %+v",
				i, ran, wantRun, pres, guardReasons, defaultAction.Action, hasApprover, approverGrants, out.Result)
		}
		if anyGuard {
			var de *DeniedError
			if !errors.As(out.Err, &de) || (effective != PreDeny && de.Stage != StageGuard) {
				t.Fatalf("case %d: a guard gave a reason but Err = %v", i, out.Err)
			}
		}
	}
}

// TestGuardRegisteredDuringApprovalApplies: guards run again after a
// grant, with the registrations current then.
func TestGuardRegisteredDuringApprovalApplies(t *testing.T) {
	rec := &recorder{}
	p := New(tools(rec.def("t")), WithDefaultDecision(Ask("?")))
	out := p.Execute(context.Background(), Input{Tool: "t", Approver: ApproverFunc(
		func(context.Context, *Execution, AskRequest) (Approval, error) {
			must(t, p.AddGuard("late", func(*Execution) string { return "configuration changed" }))
			return Approval{AllowedOnce: true}, nil
		})})
	if rec.count() != 0 || !strings.Contains(out.Result.Error.Message, "configuration changed") {
		t.Errorf("result = %+v", out.Result)
	}
}

func TestPositions(t *testing.T) {
	p := New(tools())
	nop := func(_ *Execution, next func() PreDecision) PreDecision { return next() }
	must(t, p.AddPre("b", nop, Last))
	must(t, p.AddPre("a", nop, First))
	must(t, p.AddPre("d", nop, Last))
	must(t, p.AddPre("c", nop, Before("d")))
	must(t, p.AddPre("e", nop, After("d")))
	if got := strings.Join(p.PreListeners(), ","); got != "a,b,c,d,e" {
		t.Fatalf("order = %s", got)
	}
	must(t, p.MovePre("e", First))
	must(t, p.MovePre("a", After("d")))
	if got := strings.Join(p.PreListeners(), ","); got != "e,b,c,d,a" {
		t.Errorf("after moves = %s", got)
	}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{p.AddPre("a", nop, Last), ErrDuplicateName},
		{p.AddPre("x", nop, Before("missing")), ErrNoSuchListener},
		{p.AddPre("", nop, Last), ErrInvalidListener},
		{p.AddPre("y", nil, Last), ErrInvalidListener},
		{p.MovePre("missing", First), ErrNoSuchListener},
		{p.MovePre("a", After("a")), ErrNoSuchListener},
		{p.AddGuard("g", nil), ErrInvalidListener},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("err = %v, want %v", tc.err, tc.want)
		}
	}
	if got := strings.Join(p.PreListeners(), ","); got != "e,b,c,d,a" {
		t.Errorf("a failed change altered the chain: %s", got)
	}
	if !p.RemovePre("c") || p.RemovePre("c") {
		t.Error("RemovePre")
	}
	if got := strings.Join(p.PreListeners(), ","); got != "e,b,d,a" {
		t.Errorf("after remove = %s", got)
	}
}

func TestRemoveHooks(t *testing.T) {
	rec := &recorder{}
	p := New(tools(rec.def("t")))
	deny := func(*Execution) string { return "no" }
	must(t, p.AddGuard("g", deny))
	must(t, p.AddScopeGuard("s", "g", deny))
	must(t, p.AddPost("p", func(*Execution, registry.Result, func() PostDecision) PostDecision { return Block("no") }, Last))
	must(t, p.AddObserver("o", func(*Execution, registry.Result) error { t.Error("removed observer ran"); return nil }))
	must(t, p.AddWrapper("w", func(context.Context, *Execution, func(context.Context) registry.Result) registry.Result {
		return registry.ErrorResult("X", "no")
	}, Last))
	if !p.RemoveGuard("g") || !p.RemoveScopeGuard("s", "g") || !p.RemovePost("p") || !p.RemoveObserver("o") || !p.RemoveWrapper("w") {
		t.Fatal("a Remove did not find its hook")
	}
	if p.RemoveGuard("g") || p.RemoveScopeGuard("s", "g") {
		t.Error("removed twice")
	}
	if out := p.Execute(context.Background(), Input{Tool: "t", Scope: "s"}); out.Result.IsError {
		t.Errorf("result = %+v", out.Result)
	}
	must(t, p.AddScopeGuard("s", "g", deny))
	p.RemoveScope("s")
	if out := p.Execute(context.Background(), Input{Tool: "t", Scope: "s"}); out.Result.IsError {
		t.Errorf("after RemoveScope: %+v", out.Result)
	}
}

// TestRegistrationWhileExecuting runs calls while listeners come and go;
// run with -race.
func TestRegistrationWhileExecuting(t *testing.T) {
	rec := &recorder{}
	p := New(tools(rec.def("t")))
	stop := testsupport.Repeat(4, func(w int) bool {
		p.Execute(context.Background(), Input{Tool: "t", Scope: fmt.Sprint(w % 2), Arguments: json.RawMessage(`{"x":1}`)})
		return true
	})
	allow := func(_ *Execution, next func() PreDecision) PreDecision { return next() }
	for i := range 200 {
		name := fmt.Sprint("l", i%5)
		p.RemovePre(name)
		_ = p.AddPre(name, allow, First)
		_ = p.MovePre(name, Last)
		p.RemoveGuard(name)
		_ = p.AddGuard(name, func(*Execution) string { return "" })
		_ = p.AddScopeGuard(fmt.Sprint(i%2), name, func(*Execution) string { return "" })
		p.RemoveScopeGuard(fmt.Sprint(i%2), name)
		_ = p.AddObserver(name, func(*Execution, registry.Result) error { return nil })
		p.RemoveObserver(name)
		p.RemoveScope("1")
	}
	stop()
}

func TestCircuitBreaker(t *testing.T) {
	fail := true
	calls := 0
	def := &registry.Definition{Name: "edit", Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) {
		calls++
		if fail {
			return registry.Result{}, errors.New("old_string not found")
		}
		return registry.TextResult("ok"), nil
	}}
	p := New(tools(def))
	same := Input{Tool: "edit", Scope: "s", Arguments: json.RawMessage(`{"old":"x"}`)}
	spaced := Input{Tool: "edit", Scope: "s", Arguments: json.RawMessage(`{ "old" : "x" }`)} // same canonical args
	other := Input{Tool: "edit", Scope: "s", Arguments: json.RawMessage(`{"old":"y"}`)}
	otherScope := Input{Tool: "edit", Scope: "t", Arguments: json.RawMessage(`{"old":"x"}`)}
	ctx := context.Background()
	codes := func(ins ...Input) string {
		var out []string
		for _, in := range ins {
			o := p.Execute(ctx, in)
			code := "ok"
			if o.Result.IsError {
				code = o.Result.Error.Code
				var de *DeniedError
				if errors.As(o.Err, &de) && de.Stage == StageBreaker {
					code = "REFUSED"
					if !strings.Contains(o.Result.Error.Message, "Change your approach") {
						t.Errorf("refusal lacks feedback: %s", o.Result.Error.Message)
					}
				}
			}
			out = append(out, code)
		}
		return strings.Join(out, " ")
	}
	if got, want := codes(same, other, spaced, otherScope, same), "TOOL_ERROR TOOL_ERROR TOOL_ERROR TOOL_ERROR TOOL_ERROR"; got != want {
		t.Fatalf("first failures: %s, want %s", got, want)
	}
	if got, want := codes(same, other, otherScope), "REFUSED TOOL_ERROR TOOL_ERROR"; got != want {
		t.Fatalf("after three: %s, want %s", got, want)
	}
	if calls != 7 {
		t.Errorf("tool ran %d times; a refused call must not run", calls)
	}
	// Half open: the refusal reset the count.
	if got, want := codes(same, same, same, same), "TOOL_ERROR TOOL_ERROR TOOL_ERROR REFUSED"; got != want {
		t.Errorf("half open: %s, want %s", got, want)
	}
	// A success resets the key.
	fail = false
	codes(other)
	fail = true
	if got, want := codes(other, other, other, other), "TOOL_ERROR TOOL_ERROR TOOL_ERROR REFUSED"; got != want {
		t.Errorf("after a success: %s, want %s", got, want)
	}
	// Cancellations do not count.
	p2 := New(tools(def), WithBreakerThreshold(1))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for range 3 {
		if o := p2.Execute(cctx, same); o.Result.Error.Code != registry.CodeCancelled {
			t.Fatalf("cancelled call: %+v", o.Result)
		}
	}
	if o := p2.Execute(ctx, same); o.Result.Error.Code != registry.CodeToolError {
		t.Errorf("cancellations tripped the breaker: %+v", o.Result)
	}
	// Disabled.
	p3 := New(tools(def), WithBreakerThreshold(0))
	for range 5 {
		if o := p3.Execute(ctx, same); o.Result.Error.Code != registry.CodeToolError {
			t.Fatalf("disabled breaker refused: %+v", o.Result)
		}
	}
}
