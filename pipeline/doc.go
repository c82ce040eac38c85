// Package pipeline owns the execution of one tool call: Execute materialises
// a caller-owned [Input] once into a pipeline-owned, immutable [Execution]
// (canonical argument bytes, an opaque [Token]) and runs it through the
// stages of the seed's "Execution: extensible waterfalls plus monotonic
// policy":
//
//		materialise → tools/pre-execute → guards → (approval) → tools/execute
//		→ the tool → tools/post-execute → freeze → tools/result
//
//	  - tools/pre-execute is a named, reorderable waterfall of [PreListener]s
//	    returning a [PreDecision]; only an allowed-once grant proceeds. Ask
//	    goes to the caller's [Approver]; a missing approver, an error, a
//	    cancelled context or a non-grant is a denial.
//	  - Guards ([Guard]) are global or per-scope and monotonic: a reason
//	    denies and nothing can undo it. Guards run after the waterfall and,
//	    when the waterfall asked, again (with the then current registrations)
//	    after the human granted.
//	  - tools/execute is a stack of around-dispatch [Wrapper]s, outermost
//	    first; only the context may change on the way down.
//	  - The tool runs on its own goroutine whenever its context can be
//	    cancelled, so Execute returns promptly on cancellation or timeout even
//	    if the tool ignores its context (see [Pipeline.Stragglers]).
//	  - tools/post-execute [PostListener]s keep, replace the content of, or
//	    block the result.
//	  - The result is normalised and must round-trip losslessly through JSON;
//	    it is then frozen and handed to [Observer]s (tools/result), which get
//	    their own copies and whose failures are contained.
//
// A listener decides, a guard can only deny, and Execute runs the call
// (Example runs this with an approver that grants):
//
//	p := pipeline.New(reg) // how it finds tools: a *registry.Registry
//	_ = p.AddPre("mode", func(exec *pipeline.Execution, next func() pipeline.PreDecision) pipeline.PreDecision {
//		if exec.Kind().Mutates() {
//			return pipeline.Ask("writes a file")
//		}
//		return next()
//	}, pipeline.Last)
//	_ = p.AddGuard("roots", func(exec *pipeline.Execution) string { return outsideRoots(exec.Subjects()) })
//	out := p.Execute(ctx, pipeline.Input{Tool: "write", CallID: "c1", Arguments: args, Approver: human})
//	// out.Result is what the model reads; out.Err says which stage refused.
//
// Every failure is an isError [registry.Result] with one of the registry's
// error codes, never a Go error: a failing call never ends the turn.
//
// A circuit breaker refuses the next identical call (same scope, tool and
// canonical arguments) after N consecutive failures.
//
// Registration is copy-on-write: listeners may be added, removed and
// reordered while calls run; each call uses the snapshot current when its
// stage starts.
package pipeline
