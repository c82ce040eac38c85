package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/registry"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// fakeTools is a tiny Tools: global definitions plus per-scope ones that
// only their scope sees.
type fakeTools struct {
	global []*registry.Definition
	scoped map[string][]*registry.Definition
}

func (f *fakeTools) Lookup(scope, name string) (*registry.Definition, bool) {
	for _, d := range f.global {
		if d.Name == name {
			return d, true
		}
	}
	for _, d := range f.scoped[scope] {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

func (f *fakeTools) Visible(scope string) []*registry.Definition {
	return append(append([]*registry.Definition(nil), f.global...), f.scoped[scope]...)
}

func tools(defs ...*registry.Definition) *fakeTools { return &fakeTools{global: defs} }

// recorder is a tool body that records what it received.
type recorder struct {
	mu    sync.Mutex
	calls int
	args  [][]byte
	ctxs  []context.Context
}

func (r *recorder) def(name string) *registry.Definition {
	return &registry.Definition{Name: name, Kind: "read", Execute: r.run}
}

func (r *recorder) run(ctx context.Context, call registry.Call, args json.RawMessage) (registry.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.args = append(r.args, args)
	r.ctxs = append(r.ctxs, ctx)
	return registry.TextResult("ok"), nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func (r *recorder) last() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.args[len(r.args)-1])
}

// quiet returns an option discarding logs (tests provoke panics on
// purpose) and the buffer they would have gone to.
func quiet() (Option, *testsupport.SyncBuffer) {
	var b testsupport.SyncBuffer
	return WithLogger(slog.New(slog.NewTextHandler(&b, nil))), &b
}

func errCode(t *testing.T, out Outcome) string {
	t.Helper()
	if !out.Result.IsError {
		if out.Err != nil {
			t.Errorf("Err = %v on a successful result", out.Err)
		}
		return ""
	}
	if out.Err == nil {
		t.Errorf("isError result without Err: %+v", out.Result)
	}
	if out.Result.Error == nil {
		t.Fatalf("isError result without a structured error: %+v", out.Result)
	}
	if len(out.Result.Content) == 0 {
		t.Errorf("isError result without content for the model: %+v", out.Result)
	}
	return out.Result.Error.Code
}
