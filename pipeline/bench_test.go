package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/dsh-tools/dshd/registry"
)

// args5 is a typical five-field argument object.
var args5 = json.RawMessage(`{"path":"/work/src/pipeline/pipeline.go","offset":120,"limit":400,"recursive":true,"pattern":"func \\(p \\*Pipeline\\)"}`)

// reportCPU reports process CPU nanoseconds per op ("cpu-ns/op"), a
// figure other processes on the machine do not inflate; call it as
// defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func noop() *registry.Definition {
	ok := registry.TextResult("ok")
	return &registry.Definition{Name: "noop", Kind: "read",
		Execute: func(context.Context, registry.Call, json.RawMessage) (registry.Result, error) { return ok, nil }}
}

// BenchmarkBareJSON is the same-run reference: decoding and re-encoding
// the arguments, the least any pipeline must do with them.
func BenchmarkBareJSON(b *testing.B) {
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(args5, &m); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func benchExecute(b *testing.B, p *Pipeline, ctx context.Context) {
	b.ReportAllocs()
	in := Input{Tool: "noop", CallID: "c", Scope: "s", Arguments: args5}
	defer reportCPU(b)()
	for b.Loop() {
		if out := p.Execute(ctx, in); out.Result.IsError {
			b.Fatal(out.Result)
		}
	}
}

// BenchmarkExecute: a no-op tool, no listeners. "background" runs the
// tool inline (nothing can cancel it); "cancellable" runs it on its own
// goroutine, the usual case under a prompt turn's context.
func BenchmarkExecute(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("background", func(b *testing.B) { benchExecute(b, New(tools(noop())), context.Background()) })
	b.Run("cancellable", func(b *testing.B) { benchExecute(b, New(tools(noop())), ctx) })
}

func withListeners(p *Pipeline) *Pipeline {
	for i := range 10 {
		_ = p.AddPre(fmt.Sprint("pre", i), func(_ *Execution, next func() PreDecision) PreDecision { return next() }, Last)
	}
	for i := range 5 {
		_ = p.AddGuard(fmt.Sprint("guard", i), func(*Execution) string { return "" })
	}
	for i := range 3 {
		_ = p.AddWrapper(fmt.Sprint("wrap", i), func(ctx context.Context, _ *Execution, next func(context.Context) registry.Result) registry.Result {
			return next(ctx)
		}, Last)
		_ = p.AddPost(fmt.Sprint("post", i), func(_ *Execution, _ registry.Result, next func() PostDecision) PostDecision { return next() }, Last)
		_ = p.AddObserver(fmt.Sprint("obs", i), func(*Execution, registry.Result) error { return nil })
	}
	return p
}

// BenchmarkExecuteListeners: the same with 10 pre-execute listeners, 5
// guards, 3 wrappers, 3 post-execute listeners and 3 observers.
func BenchmarkExecuteListeners(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("background", func(b *testing.B) { benchExecute(b, withListeners(New(tools(noop()))), context.Background()) })
	b.Run("cancellable", func(b *testing.B) { benchExecute(b, withListeners(New(tools(noop()))), ctx) })
}

// BenchmarkExecuteParallel: Execute from one goroutine per proc, with one
// proc and with every core.
func BenchmarkExecuteParallel(b *testing.B) {
	// One sub-benchmark per number of procs, so that a single run (make
	// bench-table) reports how Execute scales; -cpu would do the same,
	// but only when asked for.
	for _, procs := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := withListeners(New(tools(noop())))
			b.ReportAllocs()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				in := Input{Tool: "noop", CallID: "c", Scope: "s", Arguments: args5}
				for pb.Next() {
					if out := p.Execute(ctx, in); out.Result.IsError {
						b.Error(out.Result)
						return
					}
				}
			})
		})
		if runtime.NumCPU() == 1 {
			break
		}
	}
}

// FuzzExecute runs arbitrary argument bytes through a pipeline whose
// guard and tool both decode them: Execute never panics, every outcome
// freezes, rejected input never reaches policy, and the guard and the tool
// always see the same bytes and the same values.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{``, `{}`, string(args5), `{"a":1,"a":2}`, `{"a":NaN}`, "{\"a\":\"\xff\"}",
		`{"a":"\ud800"}`, `{"a":1} {}`, `[1,2]`, `{"A":1,"a":2}`, `{"n":1e999}`, ` {"x" : [ {"y":null} ] } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var guardSaw, toolSaw []byte
		var guardVal, toolVal any
		def := &registry.Definition{Name: "t", Execute: func(_ context.Context, _ registry.Call, args json.RawMessage) (registry.Result, error) {
			toolSaw = bytes.Clone(args)
			if err := json.Unmarshal(args, &toolVal); err != nil {
				return registry.Result{}, err
			}
			return registry.TextResult(string(args)), nil
		}}
		p := New(tools(def), WithBreakerThreshold(0))
		_ = p.AddGuard("decode", func(e *Execution) string {
			guardSaw = e.Arguments()
			_ = e.DecodeArguments(&guardVal)
			return ""
		})
		out := p.Execute(context.Background(), Input{Tool: "t", Arguments: raw})
		if !json.Valid(out.JSON) {
			t.Fatalf("outcome is not JSON: %q", out.JSON)
		}
		if out.Result.IsError && out.Result.Error.Code == registry.CodeInvalidArgs {
			if guardSaw != nil {
				t.Fatal("policy saw rejected arguments")
			}
			return
		}
		if len(raw) > 0 && !json.Valid(raw) {
			t.Fatalf("invalid JSON %q accepted", raw)
		}
		if toolSaw != nil {
			if !bytes.Equal(guardSaw, toolSaw) || !reflect.DeepEqual(guardVal, toolVal) {
				t.Fatalf("guard saw %q (%v), tool got %q (%v)", guardSaw, guardVal, toolSaw, toolVal)
			}
		}
	})
}
