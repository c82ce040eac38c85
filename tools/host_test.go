package tools

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// fakeHost is a session for tool tests: local files, optional editor
// terminals, recorded progress and plan.
type fakeHost struct {
	session, cwd string
	files        host.Files
	terms        host.Terminals

	mu       sync.Mutex
	started  []string
	progress testsupport.SyncBuffer
	plan     []host.PlanEntry
}

func newFakeHost(cwd string) *fakeHost {
	return &fakeHost{session: "sess-1", cwd: cwd, files: host.LocalFiles{}}
}

func (h *fakeHost) SessionID() string { return h.session }
func (h *fakeHost) Cwd() string       { return h.cwd }
func (h *fakeHost) Roots() []string   { return []string{h.cwd} }
func (h *fakeHost) Files() host.Files { return h.files }

// Land lands path as the bridge's policy does, with the cwd as the only
// root.
func (h *fakeHost) Land(path string) (host.Landing, error) {
	l := policy.LandIn(h.Roots(), []registry.Subject{{Kind: registry.SubjectPath, Value: path}})
	lp, ok := l.Lookup(path)
	switch {
	case !ok:
		return host.Landing{}, host.ErrNotLanded
	case lp.Err != nil:
		return host.Landing{}, lp.Err
	}
	return host.Landing{Written: path, Abs: lp.Abs, Root: lp.Root}, nil
}
func (h *fakeHost) Terminals() (host.Terminals, bool) {
	return h.terms, h.terms != nil
}
func (h *fakeHost) Progress(callID string) host.Progress { return (*fakeProgress)(h) }
func (h *fakeHost) Plan(ctx context.Context, entries []host.PlanEntry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.plan = entries
	return nil
}

type fakeProgress fakeHost

func (p *fakeProgress) Started(cwd string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = append(p.started, cwd)
}

func (p *fakeProgress) Write(b []byte) (int, error) { return p.progress.Write(b) }

// fakeCall is a registry.Call of a session's host, as the pipeline's
// Execution is.
type fakeCall struct {
	name, id string
	args     json.RawMessage
	host     host.Host
}

func (c *fakeCall) ToolName() string           { return c.name }
func (c *fakeCall) CallID() string             { return c.id }
func (c *fakeCall) Arguments() json.RawMessage { return c.args }
func (c *fakeCall) Scope() string              { return "sess-1" }
func (c *fakeCall) Host() host.Host            { return c.host }

// harness runs the built-in tools against a fake host: host is the calls'
// host (h, unless a test wraps it), ctx their context.
type harness struct {
	t    *testing.T
	h    *fakeHost
	host host.Host
	ctx  context.Context
	defs map[string]*registry.Definition
}

func newHarness(t *testing.T, cwd string, opts Options) *harness {
	h := newFakeHost(cwd)
	hs := &harness{t: t, h: h, host: h, ctx: context.Background(), defs: map[string]*registry.Definition{}}
	for _, d := range Builtin(opts) {
		hs.defs[d.Name] = d
	}
	return hs
}

func (hs *harness) call(name string, args any) *fakeCall {
	hs.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		hs.t.Fatal(err)
	}
	return &fakeCall{name: name, id: "call-1", args: raw, host: hs.host}
}

// run executes a tool; an error from Execute (bad args) fails the test.
func (hs *harness) run(name string, args any) registry.Result {
	hs.t.Helper()
	d, ok := hs.defs[name]
	if !ok {
		hs.t.Fatalf("no tool %q", name)
	}
	c := hs.call(name, args)
	r, err := d.Execute(hs.ctx, c, c.args)
	if err != nil {
		hs.t.Fatalf("%s(%s): %v", name, c.args, err)
	}
	// Results must survive the pipeline's JSON freeze unchanged.
	b, err := json.Marshal(r)
	if err != nil {
		hs.t.Fatalf("%s: result does not marshal: %v", name, err)
	}
	var back registry.Result
	if err := json.Unmarshal(b, &back); err != nil {
		hs.t.Fatalf("%s: result does not round-trip: %v", name, err)
	}
	return r
}

func (hs *harness) view(name string, args any, r registry.Result) *presentation.ResultView {
	d := hs.defs[name]
	if d.PresentResult == nil {
		return r.View
	}
	return d.PresentResult(hs.call(name, args), r)
}

func text(r registry.Result) string {
	s := ""
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}
