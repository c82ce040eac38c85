package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/structured"
)

// Name is the tool's name.
const Name = "task"

// DefaultMaxDepth is how deep subagents may nest when Options.MaxDepth is
// zero: a subagent of a subagent of a subagent, no further.
const DefaultMaxDepth = 3

// Error codes of a failed task, beside the registry's.
const (
	// CodeNestingTooDeep: the caller is already a subagent at the maximum
	// depth.
	CodeNestingTooDeep = "NESTING_TOO_DEEP"
	// CodeUnsupportedSchema: the outputSchema is outside the structured
	// subset; the details list every violation.
	CodeUnsupportedSchema = "UNSUPPORTED_OUTPUT_SCHEMA"
	// CodeStructuredOutput: the subagent never produced a value its
	// outputSchema accepts; the details list the last violations.
	CodeStructuredOutput = "STRUCTURED_OUTPUT_FAILED"
	// CodeStepCap: the subagent hit its step cap before answering.
	CodeStepCap = "STEP_CAP"
)

// Options configure the task tool.
type Options struct {
	// Loop runs the sub-turns. Required.
	Loop *model.Loop
	// Registry is the registry the bridge runs tools from; child scopes
	// are made in it. Required.
	Registry *registry.Registry
	// Pipeline, optional, is the bridge's pipeline: the tool forgets a
	// child scope's pipeline state (breaker counts, scope guards) there
	// when the subagent ends.
	Pipeline *pipeline.Pipeline
	// MaxDepth bounds nesting (0: [DefaultMaxDepth]).
	MaxDepth int
}

// Args are the task tool's arguments.
type Args struct {
	Prompt       string          `json:"prompt"`
	Name         string          `json:"name,omitempty"`
	Tools        *ToolSubset     `json:"tools,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	MaxSteps     int             `json:"maxSteps,omitempty"`
}

// ToolSubset restricts the subagent's tools; both lists name tools the
// caller can see. Without Allow every such tool is admitted, minus Deny.
type ToolSubset struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// parameters is the model-facing schema. outputSchema is any object here:
// structured.AssertSupported judges it, listing every violation.
const parameters = `{
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "minLength": 1, "description": "The complete task for the subagent: it sees nothing of this conversation but this text."},
    "name": {"type": "string", "maxLength": 40, "description": "A short label for the subagent, shown to the user."},
    "tools": {
      "type": "object",
      "description": "Restrict the subagent's tools (default: all of yours).",
      "properties": {
        "allow": {"type": "array", "items": {"type": "string"}, "description": "Only these tools."},
        "deny": {"type": "array", "items": {"type": "string"}, "description": "Not these tools."}
      },
      "additionalProperties": false
    },
    "outputSchema": {"type": "object", "description": "A JSON Schema (object root; type, properties, required, additionalProperties, items, enum, const, bounds, lengths, pattern) the subagent's answer must match; the result then carries the value."},
    "maxSteps": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many model requests."}
  },
  "required": ["prompt"],
  "additionalProperties": false
}`

const description = `Start a subagent: another agent that works on a self-contained task with its own conversation and (optionally) fewer tools, and returns its answer. Use it for focused side work (research across many files, a mechanical change) whose details would clutter this conversation. Give outputSchema to get a machine-readable answer.`

// tool is one task tool.
type tool struct {
	opts Options
	seq  atomic.Uint64
}

// validator is the task tool's compiled parameter schema, compiled on the
// first call rather than at start-up, where it cost 1 % of the daemon's
// start (the schema is a constant; a test compiles it).
var validator = sync.OnceValues(func() (*registry.Validator, error) {
	return registry.CompileSchema(json.RawMessage(parameters))
})

// New returns the task tool. It panics without Loop or Registry: that is a
// wiring bug.
func New(opts Options) *registry.Definition {
	if opts.Loop == nil || opts.Registry == nil {
		panic("task: Options.Loop and Options.Registry are required")
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	t := &tool{opts: opts}
	return &registry.Definition{
		Name:        Name,
		Title:       "task",
		Description: description,
		Parameters:  json.RawMessage(parameters),
		// The task itself changes nothing: each of the subagent's calls is
		// judged by policy on its own. Its calls may change the workspace,
		// though, so two tasks (or a task and a read) never run at once.
		Kind:        presentation.KindThink,
		Delegates:   true,
		Execute:     t.execute,
		PresentCall: t.presentCall,
	}
}

// decode validates and decodes raw arguments.
func (t *tool) decode(raw json.RawMessage) (Args, error) {
	var a Args
	v, err := validator()
	if err != nil {
		return a, err
	}
	if err := v.Validate(raw); err != nil {
		var ae *registry.ToolArgsError
		if errors.As(err, &ae) {
			ae.Tool = Name
		}
		return a, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, err
	}
	return a, nil
}

// label is how the subagent is named in titles.
func label(a Args) string {
	if s := strings.TrimSpace(a.Name); s != "" {
		return s
	}
	words := strings.Fields(a.Prompt)
	if len(words) > 4 {
		words = append(words[:4], "…")
	}
	s := strings.Join(words, " ")
	if r := []rune(s); len(r) > 40 {
		s = string(r[:39]) + "…"
	}
	return s
}

func (t *tool) presentCall(call registry.Call) presentation.CallView {
	a, err := t.decode(call.Arguments())
	if err != nil {
		return presentation.CallView{Title: Name, Kind: presentation.KindThink}
	}
	return presentation.CallView{
		Title:   "task ‹" + label(a) + "›",
		Kind:    presentation.KindThink,
		Content: []presentation.Content{presentation.Text(a.Prompt)},
	}
}

func failure(code, msg string, details any) registry.Result {
	r := registry.ErrorResult(code, msg)
	if details != nil {
		r.Error.Details, _ = json.Marshal(details)
	}
	return r
}

// depthOf is how many subagent levels scope is below its session.
func depthOf(scope, sessionID string) int {
	rest, ok := strings.CutPrefix(scope, sessionID)
	if !ok {
		return 0
	}
	return strings.Count(rest, "/")
}

func (t *tool) execute(ctx context.Context, call registry.Call, raw json.RawMessage) (registry.Result, error) {
	a, err := t.decode(raw)
	if err != nil {
		var ae *registry.ToolArgsError
		if errors.As(err, &ae) {
			return ae.Result(), nil
		}
		return registry.ErrorResult(registry.CodeInvalidArgs, err.Error()), nil
	}
	// Schema first: an unsupported schema fails before anything else runs,
	// listing every violation.
	if a.OutputSchema != nil {
		if err := structured.AssertSupported(a.OutputSchema); err != nil {
			var se *structured.OutputSchemaError
			if errors.As(err, &se) {
				return failure(CodeUnsupportedSchema, "outputSchema is not supported: "+err.Error(), map[string]any{"violations": se.Violations}), nil
			}
			return failure(CodeUnsupportedSchema, err.Error(), nil), nil
		}
	}
	exec, ok := call.(*pipeline.Execution)
	if !ok {
		return registry.ErrorResult(registry.CodeToolError, "task runs only through the tool pipeline"), nil
	}
	turn, ok := bridge.TurnOf(call)
	h := call.Host()
	if !ok || h == nil {
		return registry.ErrorResult(registry.CodeToolError, "task runs only inside a prompt turn"), nil
	}
	parentScope := call.Scope()
	if depth := depthOf(parentScope, h.SessionID()); depth >= t.opts.MaxDepth {
		return failure(CodeNestingTooDeep, fmt.Sprintf("Subagents nest at most %d deep and this caller is already at depth %d: do the work yourself instead of starting another subagent.", t.opts.MaxDepth, depth),
			map[string]int{"depth": depth, "maxDepth": t.opts.MaxDepth}), nil
	}
	restriction := registry.Restriction{}
	if a.Tools != nil {
		if unknown := t.unknownTools(parentScope, a.Tools); len(unknown) > 0 {
			return registry.ErrorResult(registry.CodeInvalidArgs, fmt.Sprintf("tools names tools you cannot use: %s", strings.Join(unknown, ", "))), nil
		}
		var allow []string
		if a.Tools.Allow != nil {
			allow = a.Tools.Allow
		}
		restriction = registry.NewRestriction(allow, a.Tools.Deny)
	}

	child := parentScope + "/task-" + strconv.FormatUint(t.seq.Add(1), 10)
	if err := t.opts.Registry.Restrict(child, parentScope, restriction); err != nil {
		return registry.ErrorResult(registry.CodeToolError, err.Error()), nil
	}
	defer func() {
		t.opts.Registry.RemoveScope(child)
		if t.opts.Pipeline != nil {
			t.opts.Pipeline.RemoveScope(child)
		}
	}()

	name := label(a)
	prog := &progress{turn: turn, callID: call.CallID(), name: name}
	res, err := t.opts.Loop.RunSubturn(ctx, turn, model.Subturn{
		Prompt:       a.Prompt,
		Scope:        child,
		Parent:       exec.Token(),
		CallIDPrefix: call.CallID() + "/",
		TitlePrefix:  "task ‹" + name + "›: ",
		MaxRequests:  a.MaxSteps,
		OutputSchema: a.OutputSchema,
		Observe:      prog.observe,
	})
	switch {
	case ctx.Err() != nil || res.StopReason == acp.StopCancelled:
		return registry.ErrorResult(registry.CodeCancelled, "The subagent was cancelled."), nil
	case err != nil:
		return registry.ErrorResult(registry.CodeToolError, "The subagent failed: "+err.Error()), nil
	case res.StructuredError != nil:
		msg := "The subagent did not produce a valid structured answer: " + res.StructuredError.Message
		for _, v := range res.StructuredError.Violations {
			msg += "\n- " + v.String()
		}
		return failure(CodeStructuredOutput, msg, res.StructuredError), nil
	case res.StopReason == acp.StopMaxTurnRequests:
		msg := fmt.Sprintf("The subagent reached its cap of %d steps before answering.", res.Requests)
		if res.Answer != "" {
			msg += " Its last text:\n" + res.Answer
		}
		return failure(CodeStepCap, msg, map[string]int{"steps": res.Requests}), nil
	case res.StopReason == acp.StopRefusal:
		return registry.ErrorResult(registry.CodeToolError, "The subagent's model refused the task."), nil
	}
	if res.Structured != nil {
		return registry.Result{
			Content:    []presentation.Content{presentation.Text(string(res.Structured))},
			Structured: res.Structured,
		}, nil
	}
	answer := res.Answer
	if strings.TrimSpace(answer) == "" {
		answer = "(The subagent finished without a text answer.)"
	}
	return registry.TextResult(answer), nil
}

// unknownTools lists the names of a subset the caller cannot see.
func (t *tool) unknownTools(scope string, s *ToolSubset) []string {
	var out []string
	for _, n := range slices.Concat(s.Allow, s.Deny) {
		if _, ok := t.opts.Registry.Lookup(scope, n); !ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// progress shows a subagent's steps on its task card.
type progress struct {
	turn   *bridge.Turn
	callID string
	name   string

	mu    sync.Mutex
	lines []string
	text  bool // the last line is streamed text
}

// maxProgressLines bounds the card: the latest steps are shown.
const maxProgressLines = 12

func (p *progress) observe(ev model.SubturnEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ev.Text != "":
		if !p.text {
			p.lines = append(p.lines, "")
			p.text = true
		}
		p.lines[len(p.lines)-1] += ev.Text
		return // shown with the next step: text streams in small pieces
	case ev.Thought != "":
		return
	case ev.Call != "" && !ev.Done:
		p.lines = append(p.lines, "→ "+ev.Call)
	case ev.Call != "":
		mark := "✓ "
		if ev.Failed {
			mark = "✗ "
		}
		p.lines = append(p.lines, mark+ev.Call)
	}
	p.text = false
	lines := p.lines
	if len(lines) > maxProgressLines {
		lines = lines[len(lines)-maxProgressLines:]
	}
	p.turn.ShowProgress(p.callID, "Subagent ‹"+p.name+"› is working:\n"+strings.Join(lines, "\n"))
}
