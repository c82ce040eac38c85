// Package registry owns tool definitions: the Definition type, the typed DSL
// ([Define]) that derives a tool's JSON Schema from its Args struct and
// validates model-generated arguments before decoding them, the model-facing
// ToolSchema projection, and the layered Registry (a live-replaceable
// deployment-global layer filtered by restrictions, overlaid by scope-local
// tools).
package registry
