// Package structured owns the structured-output vocabulary: the
// [StructuredOutputSchema] subset of JSON Schema a caller may use to demand
// a machine-readable result (a subagent's outputSchema, a workflow's agent
// call), [AssertSupported], which refuses anything outside the subset and
// lists every violation, and [Validate], which checks a produced value
// against such a schema and lists every violation with its path.
//
// For example (ExampleValidate):
//
//	schema := json.RawMessage(`{"type":"object","required":["verdict"],"properties":{"verdict":{"enum":["pass","fail"]}}}`)
//	if err := structured.AssertSupported(schema); err != nil { … } // outside the subset: every violation listed
//	err := structured.Validate(schema, map[string]any{"verdict": "maybe"})
//	// structured: value does not match the output schema (1):
//	// - /verdict: enum: must be one of "pass", "fail"
//
// The subset is deliberately not full JSON Schema: the schema travels
// verbatim to the model (as a forced tool's parameters) and is enforced
// here, client-side, so every keyword accepted ([Keywords]) is one
// Validate enforces. Its verdicts agree with santhosh-tekuri/jsonschema
// (draft 2020-12) on every supported schema; a differential test and a
// fuzz target hold it to that.
//
// Both walkers see only plain JSON data. Values that would not survive a
// JSON round trip unchanged — NaN, ±Inf, maps with non-string keys,
// channels, funcs, cyclic data, structs and types with their own
// MarshalJSON/MarshalText — are reported as violations, never converted.
package structured
