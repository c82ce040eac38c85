package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Fakes shared by the transcript tests, the unit tests and the benchmarks:
// a set of test tools, a scripted loop, a fixed clock and counting ids.

// fixedNow is the clock of every test agent.
var fixedNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

type readArgs struct {
	Path string `json:"path"`
}

type editArgs struct {
	Path string  `json:"path"`
	Old  *string `json:"old,omitempty"`
	New  string  `json:"new"`
}

type runArgs struct {
	Command string  `json:"command"`
	Output  *string `json:"output,omitempty"`
	Exit    *int    `json:"exit,omitempty"`
}

type noArgs struct{}

func mustDefine(d *registry.Definition, err error) *registry.Definition {
	if err != nil {
		panic(err)
	}
	return d
}

// testTools returns the fake tools: read_file (read), edit_file (edit, diff
// card and its preview, from the arguments alone; it does not touch the
// disk), run (execute, terminal card; through the editor's terminal when
// offered, otherwise "printing" Output), slow (execute, blocks until
// cancelled) and noop (read, returns "ok").
func testTools() []*registry.Definition {
	read := mustDefine(registry.Define(registry.Spec[readArgs]{
		Name: "read_file", Description: "Read a file.", Kind: presentation.KindRead,
		PresentCall: func(_ registry.Call, a readArgs) presentation.CallView {
			return presentation.CallView{Title: "Read " + a.Path, Locations: []presentation.FileLocation{{Path: a.Path}}}
		},
		Subjects: func(_ registry.Call, a readArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path}}
		},
	}, func(_ context.Context, _ registry.Call, a readArgs) (registry.Result, error) {
		return registry.TextResult("contents of " + a.Path), nil
	}))
	edit := mustDefine(registry.Define(registry.Spec[editArgs]{
		Name: "edit_file", Description: "Edit a file.", Kind: presentation.KindEdit,
		PresentCall: func(_ registry.Call, a editArgs) presentation.CallView {
			return presentation.CallView{Title: "Edit " + a.Path, Locations: []presentation.FileLocation{{Path: a.Path}}}
		},
		Subjects: func(_ registry.Call, a editArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: true}}
		},
		// The diff the edit would make, from its arguments alone.
		Preview: func(_ context.Context, _ registry.Call, a editArgs) (*presentation.ResultView, error) {
			return &presentation.ResultView{Card: presentation.Hunks(a.Path, a.Old, &a.New).Card("Edit " + a.Path)}, nil
		},
	}, func(_ context.Context, _ registry.Call, a editArgs) (registry.Result, error) {
		d := presentation.Hunks(a.Path, a.Old, &a.New)
		res := registry.TextResult(fmt.Sprintf("edited %s (%d hunks)", a.Path, len(d.Diffs)))
		res.View = &presentation.ResultView{Card: d.Card("Edit " + a.Path)}
		return res, nil
	}))
	run := mustDefine(registry.Define(registry.Spec[runArgs]{
		Name: "run", Description: "Run a command.", Kind: presentation.KindExecute,
		PresentCall: func(_ registry.Call, a runArgs) presentation.CallView {
			return presentation.CallView{Title: "Run `" + a.Command + "`"}
		},
		Subjects: func(_ registry.Call, a runArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectCommand, Value: a.Command}}
		},
	}, func(ctx context.Context, call registry.Call, a runArgs) (registry.Result, error) {
		h := call.Host()
		var card *presentation.TerminalCard
		if terms, ok := h.Terminals(); ok {
			c, err := terms.Run(ctx, host.TerminalRequest{CallID: call.CallID(), Command: a.Command, Cwd: h.Cwd()})
			if err != nil {
				return registry.Result{}, err
			}
			card = c
		} else {
			p := h.Progress(call.CallID())
			p.Started(h.Cwd())
			var out string
			if a.Output != nil {
				out = *a.Output
				_, _ = p.Write([]byte(out))
			}
			code := 0
			if a.Exit != nil {
				code = *a.Exit
			}
			card = &presentation.TerminalCard{Title: a.Command, Output: out, ExitCode: &code}
		}
		res := registry.TextResult(card.Output)
		res.IsError = card.ExitCode != nil && *card.ExitCode != 0
		if res.IsError {
			res.Error = &registry.ToolError{Code: registry.CodeToolError, Message: "exit status " + strconv.Itoa(*card.ExitCode)}
		}
		res.View = &presentation.ResultView{Card: card}
		return res, nil
	}))
	slow := mustDefine(registry.Define(registry.Spec[runArgs]{
		Name: "slow", Description: "Run a command that never ends.", Kind: presentation.KindExecute,
		Subjects: func(_ registry.Call, a runArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectCommand, Value: a.Command}}
		},
	}, func(ctx context.Context, _ registry.Call, _ runArgs) (registry.Result, error) {
		<-ctx.Done()
		return registry.Result{}, ctx.Err()
	}))
	noop := mustDefine(registry.Define(registry.Spec[noArgs]{
		Name: "noop", Description: "Do nothing.", Kind: presentation.KindRead,
	}, func(context.Context, registry.Call, noArgs) (registry.Result, error) {
		return registry.TextResult("ok"), nil
	}))
	return []*registry.Definition{read, edit, run, slow, noop}
}

// step is one action of a scripted turn.
type step struct {
	Text    string           `json:"text,omitempty"`
	Thought string           `json:"thought,omitempty"`
	Call    *scriptCall      `json:"call,omitempty"`
	Plan    []acp.PlanEntry  `json:"plan,omitempty"`
	Usage   *acp.UsageUpdate `json:"usage,omitempty"`
	Stop    acp.StopReason   `json:"stop,omitempty"`
	Error   string           `json:"error,omitempty"`
	// Remember stores a history record.
	Remember json.RawMessage `json:"remember,omitempty"`
	// EchoHistory says how many history records the turn saw.
	EchoHistory bool `json:"echoHistory,omitempty"`
	// Compact shows a compaction (see bridge.Turn.StartCompaction).
	Compact *compactStep `json:"compact,omitempty"`
}

// compactStep is a scripted compaction: its trigger and sizes, the
// summary streamed in pieces, and how it ends.
type compactStep struct {
	Trigger string               `json:"trigger"`
	Pre     int                  `json:"pre"`
	Post    int                  `json:"post"`
	Summary []string             `json:"summary,omitempty"`
	Status  acp.CompactionStatus `json:"status"`
	Error   string               `json:"error,omitempty"`
}

type scriptCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// scriptLoop plays one scripted turn per prompt, in order; a prompt past
// the script gets a plain "ok".
type scriptLoop struct {
	turns [][]step
	next  atomic.Int32
}

func (l *scriptLoop) Turn(ctx context.Context, t *bridge.Turn) (acp.StopReason, error) {
	i := int(l.next.Add(1)) - 1
	if i >= len(l.turns) {
		t.Text("ok")
		return acp.StopEndTurn, nil
	}
	for _, s := range l.turns[i] {
		switch {
		case s.Text != "":
			t.Text(s.Text)
		case s.Thought != "":
			t.Thought(s.Thought)
		case s.Call != nil:
			res := t.Execute(ctx, bridge.ToolCall{ID: s.Call.ID, Name: s.Call.Name, Arguments: s.Call.Arguments})
			if ctx.Err() != nil {
				return acp.StopCancelled, nil
			}
			_ = res
		case s.Plan != nil:
			t.Plan(s.Plan)
		case s.Usage != nil:
			t.Usage(s.Usage.Used, s.Usage.Size, s.Usage.Cost)
		case s.Remember != nil:
			if err := t.Remember(s.Remember); err != nil {
				return "", err
			}
		case s.Compact != nil:
			c := t.StartCompaction(s.Compact.Trigger, s.Compact.Pre)
			for _, text := range s.Compact.Summary {
				c.Summary(text)
			}
			c.End(s.Compact.Status, s.Compact.Post, s.Compact.Error)
		case s.EchoHistory:
			t.Text(fmt.Sprintf("history: %d records", len(t.History())))
		case s.Error != "":
			return "", fmt.Errorf("%s", s.Error)
		case s.Stop != "":
			return s.Stop, nil
		}
	}
	return acp.StopEndTurn, nil
}

// counter returns an id generator: prefix-1, prefix-2, …
func counter(prefix string) func() string {
	var n atomic.Int64
	return func() string { return prefix + "-" + strconv.FormatInt(n.Add(1), 10) }
}

// newTestAgent builds an agent over the test tools.
func newTestAgent(tb testing.TB, loop bridge.Loop, stateDir string) *bridge.Agent {
	tb.Helper()
	a, err := buildTestAgent(loop, stateDir)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func buildTestAgent(loop bridge.Loop, stateDir string) (*bridge.Agent, error) {
	return buildTestAgentWith(loop, stateDir, nil)
}

// buildTestAgentWith is buildTestAgent with a chance to change the options.
func buildTestAgentWith(loop bridge.Loop, stateDir string, adjust func(*bridge.Options)) (*bridge.Agent, error) {
	reg := registry.New()
	if err := reg.SetGlobal(testTools()...); err != nil {
		return nil, err
	}
	opts := bridge.Options{
		Loop:         loop,
		Registry:     reg,
		StateDir:     stateDir,
		AgentInfo:    acp.Implementation{Name: "dshd-test", Version: "0.0.0"},
		Prompt:       acp.PromptCapabilities{EmbeddedContext: true},
		Now:          func() time.Time { return fixedNow },
		NewSessionID: counter("sess"),
		Logger:       discardLogger(),
	}
	if adjust != nil {
		adjust(&opts)
	}
	return bridge.New(opts), nil
}
