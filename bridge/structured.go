package bridge

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/structured"
)

// Structured turns: a client may ask for a machine-readable result of a
// whole prompt turn. The extension lives under the bridge's `_meta`
// namespace ([MetaKey]) and is advertised only when the loop honours it
// ([Options].StructuredTurns):
//
//	initialize result   agentCapabilities._meta.dshd.structuredTurns: true
//	session/prompt      _meta.dshd.outputSchema: {a structured.StructuredOutputSchema}
//	prompt response     _meta.dshd.structured: the validated value, or
//	                    _meta.dshd.structuredError: {message, violations?}
//
// The schema is checked with structured.AssertSupported before the turn
// starts (an unsupported one fails the request with -32602 listing every
// violation); the value the loop hands to [Turn.SetStructured] is checked
// with structured.Validate. A cancelled turn carries neither.

// structuredOutcome is what the loop reported of a structured turn.
type structuredOutcome struct {
	value json.RawMessage
	err   *StructuredError
}

// StructuredError is why a structured turn has no value: the model never
// produced a valid one. It is sent as _meta.dshd.structuredError.
type StructuredError struct {
	Message    string                 `json:"message"`
	Violations []structured.Violation `json:"violations,omitempty"`
}

func (e *StructuredError) Error() string { return e.Message }

func structuredTurnsCapability() acp.Meta {
	return metaJSON(map[string]any{MetaKey: map[string]any{"structuredTurns": true}})
}

// outputSchemaOf extracts _meta.dshd.outputSchema from a prompt request.
// Without the capability the key is ignored, as any unknown _meta is.
func (a *Agent) outputSchemaOf(meta acp.Meta) (json.RawMessage, error) {
	if !a.opts.StructuredTurns || len(meta) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil, nil
	}
	var ours struct {
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if raw, ok := m[MetaKey]; !ok || json.Unmarshal(raw, &ours) != nil || len(ours.OutputSchema) == 0 || string(ours.OutputSchema) == "null" {
		return nil, nil
	}
	if err := structured.AssertSupported(ours.OutputSchema); err != nil {
		return nil, fmt.Errorf("%w: _meta.%s.outputSchema: %v", acp.ErrInvalidParams, MetaKey, err)
	}
	return ours.OutputSchema, nil
}

// OutputSchema returns the output schema the client asked this turn to
// answer with (a structured.StructuredOutputSchema, already checked with
// structured.AssertSupported), or nil for an ordinary turn. A loop that
// gets one ends the turn by producing a value for it: typically it gives
// the schema verbatim to the model as the parameters of a forced final
// tool and hands the validated arguments to [Turn.SetStructured].
func (t *Turn) OutputSchema() json.RawMessage { return t.outputSchema }

// SetStructured reports the structured result of the turn: it is checked
// against [Turn.OutputSchema] and, when valid, sent in the prompt
// response's _meta. An invalid value is refused with the
// *structured.ValidationError listing every violation (the loop may send
// them back to the model). Without an output schema it is an error.
func (t *Turn) SetStructured(value json.RawMessage) error {
	if t.outputSchema == nil {
		return errors.New("bridge: SetStructured: the turn has no output schema")
	}
	if err := structured.Validate(t.outputSchema, value); err != nil {
		return err
	}
	t.mu.Lock()
	t.structured = structuredOutcome{value: append(json.RawMessage(nil), value...)}
	t.mu.Unlock()
	return nil
}

// FailStructured reports that the turn could not produce a valid
// structured result; the prompt response carries the reason.
func (t *Turn) FailStructured(e *StructuredError) {
	if t.outputSchema == nil || e == nil {
		return
	}
	t.mu.Lock()
	if t.structured.value == nil {
		t.structured.err = e
	}
	t.mu.Unlock()
}

// structuredMeta is the prompt response's _meta of a structured turn.
func (t *Turn) structuredMeta(stop acp.StopReason) acp.Meta {
	if t.outputSchema == nil || stop == acp.StopCancelled {
		return nil
	}
	t.mu.Lock()
	out := t.structured
	t.mu.Unlock()
	switch {
	case out.value != nil:
		return metaJSON(map[string]any{MetaKey: map[string]any{"structured": out.value}})
	case out.err != nil:
		return metaJSON(map[string]any{MetaKey: map[string]any{"structuredError": out.err}})
	}
	return metaJSON(map[string]any{MetaKey: map[string]any{"structuredError": &StructuredError{Message: "the turn ended without a structured result"}}})
}
