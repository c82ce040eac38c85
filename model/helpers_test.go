package model_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// mustScript parses a script or fails the test.
func mustScript(t testing.TB, text string) *script.Script {
	t.Helper()
	s, err := script.Parse([]byte(text))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return s
}

// lookArgs are the arguments of the test tools.
type lookArgs struct {
	Path string `json:"path" desc:"a path"`
}

// testTools are a read-only tool (look) and a mutating one (poke); both
// record the order in which they ran.
type testTools struct {
	mu    sync.Mutex
	order []string
	// gate, when set, makes look calls wait until n of them run at once.
	gate *gate
	// inflight counts the look calls running; peak is its highest value.
	inflight, peak atomic.Int32
}

type gate struct {
	n       int
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, open: make(chan struct{})} }

// wait blocks until n callers arrived or ctx ends; it reports whether the
// gate opened (all n ran concurrently).
func (g *gate) wait(ctx context.Context) bool {
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.n {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
		return true
	case <-ctx.Done():
		return false
	}
}

func (tt *testTools) defs() []*registry.Definition {
	record := func(name, path string) {
		tt.mu.Lock()
		tt.order = append(tt.order, name+":"+path)
		tt.mu.Unlock()
	}
	look := registry.MustDefine(registry.Spec[lookArgs]{Name: "look", Description: "Look at a path.\nSecond line.", Kind: presentation.KindRead},
		func(ctx context.Context, _ registry.Call, a lookArgs) (registry.Result, error) {
			n := tt.inflight.Add(1)
			defer tt.inflight.Add(-1)
			for p := tt.peak.Load(); n > p && !tt.peak.CompareAndSwap(p, n); p = tt.peak.Load() {
			}
			if tt.gate != nil && !tt.gate.wait(ctx) {
				return registry.ErrorResult(registry.CodeToolError, "not concurrent"), nil
			}
			record("look", a.Path)
			return registry.TextResult("looked at " + a.Path), nil
		})
	poke := registry.MustDefine(registry.Spec[lookArgs]{Name: "poke", Description: "Change a path.", Kind: presentation.KindEdit},
		func(_ context.Context, _ registry.Call, a lookArgs) (registry.Result, error) {
			record("poke", a.Path)
			return registry.TextResult("poked " + a.Path), nil
		})
	return []*registry.Definition{look, poke}
}

func (tt *testTools) ran() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.order...)
}

// harness is a bridge agent running a model.Loop, with a test client
// connected over an in-memory pipe.
type harness struct {
	t      testing.TB
	loop   *model.Loop
	agent  *bridge.Agent
	client *acptest.Client
	conn   *acp.AgentConn
	cwd    string
}

type harnessOptions struct {
	provider llm.Provider
	opts     model.Options
	stateDir string
	tools    *testTools
	extra    []*registry.Definition // global tools besides tools'
	mode     policy.Mode
	perm     acptest.PermissionPolicy
	caps     *acp.ClientSessionCapabilities // advertised as clientCapabilities.session
}

func newHarness(t testing.TB, ho harnessOptions) *harness {
	t.Helper()
	reg := registry.New()
	if ho.tools == nil {
		ho.tools = &testTools{}
	}
	if err := reg.SetGlobal(append(ho.tools.defs(), ho.extra...)...); err != nil {
		t.Fatal(err)
	}
	o := ho.opts
	o.Provider = ho.provider
	o.Registry = reg
	o.Logger = looptest.Quiet()
	loop := model.New(o)
	agent := bridge.New(bridge.Options{
		Loop: loop, Registry: reg, StateDir: ho.stateDir, Prompt: loop.PromptCapabilities(),
		Logger: looptest.Quiet(), DefaultMode: ho.mode,
	})
	cl := &acptest.Client{Permission: ho.perm}
	conn, _ := looptest.ConnectWith(t, agent, cl, acp.ClientCapabilities{Session: ho.caps})
	h := &harness{t: t, loop: loop, agent: agent, client: cl, conn: conn, cwd: t.TempDir()}
	return h
}

func (h *harness) newSession() string { return looptest.NewSession(h.t, h.conn, h.cwd) }

func (h *harness) prompt(ctx context.Context, session string, blocks ...acp.ContentBlock) (acp.StopReason, error) {
	resp, err := h.conn.Prompt(ctx, &acp.PromptRequest{SessionID: session, Prompt: blocks})
	if err != nil {
		return "", err
	}
	return resp.StopReason, nil
}

// validate checks every message of the connection against the schema.
func (h *harness) validate() { looptest.Validate(h.t, h.client) }

// texts returns the agent message and thought text of the session's
// updates, in order.
func (h *harness) texts() (message, thought string) {
	for _, n := range h.client.Updates() {
		switch u := n.Update.Value.(type) {
		case *acp.AgentMessageChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				message += tc.Text
			}
		case *acp.AgentThoughtChunk:
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				thought += tc.Text
			}
		}
	}
	return message, thought
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
