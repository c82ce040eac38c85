// Package registry owns tool definitions: the Definition type, the typed DSL
// ([Define]) that derives a tool's [SchemaSpec] and JSON Schema from its
// Args struct and validates model-generated arguments before decoding them,
// the model-facing [ToolSchema] projection, and the layered [Registry] (a
// live-replaceable deployment-global layer filtered by [Restriction]s,
// child scopes for subagents, overlaid by scope-local tools).
//
// A tool is a Go function over a struct of arguments (Example_tool, the
// README's snippet):
//
//	type greetArgs struct {
//		Name string `json:"name" desc:"Who to greet"`
//	}
//	greet := registry.MustDefine(registry.Spec[greetArgs]{Name: "greet", Description: "Greet someone.", Kind: presentation.KindRead},
//		func(ctx context.Context, call registry.Call, a greetArgs) (registry.Result, error) {
//			return registry.TextResult("Hello, " + a.Name + "!"), nil
//		})
//	reg := registry.New()
//	err := reg.SetGlobal(greet) // every session sees it; AddScoped for one session
//
// # Arguments: validate, then decode
//
// encoding/json matches keys case-insensitively, so {"PATH": …} would
// decode into a field tagged "path" while a guard reading the raw JSON sees
// no "path" at all. Every typed call therefore validates the raw JSON
// against the tool's closed schema (additionalProperties: false at every
// level) before json.Unmarshal runs; a mismatch is a [*ToolArgsError]
// listing every violation, which the pipeline turns into an isError result
// the model can correct.
//
// Acceptance is decided by an allocation-free checker compiled from the
// SchemaSpec (it implements exactly the keywords the DSL emits); a fuzz
// target holds it to santhosh-tekuri/jsonschema/v6's verdict. The JSON
// Schema is compiled once with santhosh-tekuri, on the first rejection,
// and produces every issue: compiling is most of what defining a tool
// costs, and most tools never see bad arguments. Raw definitions (an MCP server's tools) use
// [CompileSchema] and get the same error shape. The checker is kept, although argument
// checking is about 2.5 % of the CPU profile of the 1,000-call turn, because without it a
// typical check costs 106 allocations instead of 41 and twice the time (BenchmarkDecodeArgs
// 4.2 µs against BenchmarkDecodeArgsWithoutChecker 8.0 µs in bench/results.md), far outside
// the 10 % the clean-up of issue 18 allowed.
//
// # Divergences from the seed
//
//   - "integer" is a type: Go integer fields cannot hold 1.5.
//   - map[string]T fields are objects with free keys ([SchemaProp.Values]).
//   - min, max and pattern tags add bounds the seed's vocabulary lacks.
//   - default is advertised and checked, not injected (see [Define]).
package registry
