package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/structured"
)

// FinalToolName is the forced final tool of a structured turn or task: its
// parameters are the caller's output schema, verbatim, and the turn ends
// when the model calls it with a value the schema accepts.
const FinalToolName = "final_answer"

// MaxStructuredAttempts is how many times the model may fail to produce a
// valid structured value (an invalid final_answer call, or ending its turn
// without one) before the turn fails with a structured error.
const MaxStructuredAttempts = 3

const finalDescription = "Finish by calling this tool exactly once with your answer as its arguments; they must match its parameters schema. Nothing you write as text counts as the answer."

const finalInstructions = "The caller needs a machine-readable answer: when you are done, call the " + FinalToolName + " tool with the answer as its arguments. Do not end your turn any other way."

const subagentInstructions = "You are a subagent: another agent gave you the task in the first message. Work on it with your tools, then answer it completely and concisely; your final answer is all the other agent will see."

// finalMissing is the violation of a response that ended without calling
// the final tool.
var finalMissing = []structured.Violation{{Message: "the response ended without calling " + FinalToolName}}

// finalTool is the state of a forced final tool in one run.
type finalTool struct {
	outputSchema json.RawMessage
	failures     int
	value        json.RawMessage         // the accepted value
	failure      *bridge.StructuredError // set when the attempts are spent
}

func newFinalTool(schema json.RawMessage) *finalTool {
	return &finalTool{outputSchema: schema}
}

// schema is the tool the model sees: the output schema travels verbatim.
func (f *finalTool) schema() llm.ToolSchema {
	return llm.ToolSchema{Name: FinalToolName, Description: finalDescription, Parameters: f.outputSchema}
}

// check handles a call of the final tool: the value is accepted when the
// schema validates it; otherwise the model gets every violation back, and
// after [MaxStructuredAttempts] failures the run fails.
func (f *finalTool) check(c *llm.ToolCall) llm.Part {
	res := &llm.ToolResult{CallID: c.ID, Name: c.Name}
	if f.value != nil {
		res.IsError = true
		res.Content = []llm.Part{&llm.Text{Text: FinalToolName + " was already accepted; this call is ignored."}}
		return res
	}
	raw := json.RawMessage(strings.TrimSpace(c.Arguments))
	var vs []structured.Violation
	if !json.Valid(raw) {
		vs = []structured.Violation{{Message: "the arguments are not valid JSON"}}
	} else if err := structured.Validate(f.outputSchema, raw); err != nil {
		if ve, ok := err.(*structured.ValidationError); ok {
			vs = ve.Violations
		} else {
			vs = []structured.Violation{{Message: err.Error()}}
		}
	}
	if len(vs) == 0 {
		var b bytes.Buffer
		_ = json.Compact(&b, raw)
		f.value = b.Bytes()
		res.Content = []llm.Part{&llm.Text{Text: "Accepted."}}
		return res
	}
	res.IsError = true
	if f.refuse(vs) {
		res.Content = []llm.Part{&llm.Text{Text: f.failure.Message + "\n" + listViolations(vs)}}
		return res
	}
	res.Content = []llm.Part{&llm.Text{Text: fmt.Sprintf("The value does not match the schema (attempt %d of %d). Fix every problem and call %s again:\n%s",
		f.failures, MaxStructuredAttempts, FinalToolName, listViolations(vs))}}
	return res
}

// refuse counts a failed attempt; it reports whether the attempts are
// spent (the run then fails with f.failure).
func (f *finalTool) refuse(vs []structured.Violation) bool {
	f.failures++
	if f.failures < MaxStructuredAttempts {
		return false
	}
	f.failure = &bridge.StructuredError{
		Message:    fmt.Sprintf("No valid structured answer after %d attempts.", f.failures),
		Violations: vs,
	}
	return true
}

// reminder asks for the final tool after a response that ended without it.
func (f *finalTool) reminder() string {
	return fmt.Sprintf("You ended your turn without calling %s (attempt %d of %d). Call %s now with your answer as its arguments.",
		FinalToolName, f.failures, MaxStructuredAttempts, FinalToolName)
}

func listViolations(vs []structured.Violation) string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = "- " + v.String()
	}
	return strings.Join(lines, "\n")
}

func joinInstructions(a, b string) string {
	if strings.TrimSpace(a) == "" {
		return b
	}
	return a + "\n\n" + b
}

// indentJSON shows a structured value as the final message text.
func indentJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, v, "", "  ") != nil {
		return string(v)
	}
	return "```json\n" + b.String() + "\n```"
}
