package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Issue is one violation in a tool call's arguments.
type Issue struct {
	// Pointer is the RFC 6901 JSON pointer of the offending value; "" is
	// the arguments object itself.
	Pointer string `json:"pointer"`
	// Message says what was expected, in words a model can act on.
	Message string `json:"message"`
}

// ToolArgsError is a call whose arguments do not match the tool's schema.
// It lists every violation, not just the first, so a model can fix its
// call in one try. The pipeline turns it into an isError result
// ([ToolArgsError.Result]); it never ends a turn.
type ToolArgsError struct {
	Code   string  `json:"code"` // always CodeInvalidArgs
	Tool   string  `json:"tool,omitempty"`
	Issues []Issue `json:"issues"`
}

func (e *ToolArgsError) Error() string {
	var b strings.Builder
	if e.Tool != "" {
		fmt.Fprintf(&b, "Invalid arguments for tool %q", e.Tool)
	} else {
		b.WriteString("Invalid arguments")
	}
	if len(e.Issues) == 1 {
		b.WriteString(" (1 problem):")
	} else {
		fmt.Fprintf(&b, " (%d problems):", len(e.Issues))
	}
	for _, is := range e.Issues {
		b.WriteString("\n- ")
		if is.Pointer == "" {
			b.WriteString("arguments")
		} else {
			b.WriteString(is.Pointer)
		}
		b.WriteString(": ")
		b.WriteString(is.Message)
	}
	b.WriteString("\nFix every problem listed and call the tool again.")
	return b.String()
}

// Result is the isError result the model sees: the message as text, and
// the issues as the structured error's details.
func (e *ToolArgsError) Result() Result {
	r := ErrorResult(CodeInvalidArgs, e.Error())
	r.Error.Details, _ = json.Marshal(struct {
		Tool   string  `json:"tool,omitempty"`
		Issues []Issue `json:"issues"`
	}{e.Tool, e.Issues})
	return r
}

// Validator checks raw JSON arguments against one compiled JSON Schema. It
// is safe for concurrent use. Raw definitions (an MCP server's tools, for
// example) use it through [CompileSchema]; [Define] uses the same one.
type Validator struct {
	// full is the santhosh-tekuri schema and its parsed document (to name
	// allowed properties in issues). CompileSchema compiles it at once;
	// Define's validators compile it on the first rejection, since their
	// fast checker decides acceptance and compiling costs most of a
	// typed tool's construction (and so of the daemon's start-up).
	full func() (*fullSchema, error)
	fast *checker
}

type fullSchema struct {
	schema *jsonschema.Schema
	doc    any
}

// SchemaError is a schema that does not compile.
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return "registry: invalid JSON Schema: " + e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

const schemaURL = "mem:///parameters.json"

// CompileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) once. References outside the document are refused: a schema
// from a server must not make dshd read files or the network.
func CompileSchema(raw json.RawMessage) (*Validator, error) {
	full, err := compileFull(raw)
	if err != nil {
		return nil, err
	}
	return &Validator{full: func() (*fullSchema, error) { return full, nil }}, nil
}

// derivedValidator is Define's validator: fast decides acceptance, and the
// derived schema is compiled when a rejection needs its issues. A derived
// schema that does not compile is a derivation bug, which the tests that
// compile every derivable shape guard against.
func derivedValidator(raw json.RawMessage, fast *checker) *Validator {
	return &Validator{full: sync.OnceValues(func() (*fullSchema, error) { return compileFull(raw) }), fast: fast}
}

func compileFull(raw json.RawMessage) (*fullSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &SchemaError{err}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &SchemaError{err}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, &SchemaError{err}
	}
	return &fullSchema{schema: sch, doc: doc}, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q refused", url)
}

// Validate checks raw arguments. It returns nil or a *ToolArgsError (with
// an empty Tool; the caller that knows the tool's name may set it). Empty
// input counts as {}: models send it for tools without parameters.
func (v *Validator) Validate(args json.RawMessage) error {
	_, err := v.parse(args)
	return err
}

// parse validates args and returns them parsed (numbers as json.Number).
func (v *Validator) parse(args json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	// Numbers parse as float64, exactly as encoding/json will hand them to
	// the body; json.Number would cost a big.Rat per number in the
	// validator for no gain a Go body could see.
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return nil, &ToolArgsError{Code: CodeInvalidArgs, Issues: []Issue{{
			Message: "the arguments are not valid JSON (" + err.Error() + "); send one JSON object",
		}}}
	}
	if v.fast != nil && v.fast.valid(inst) {
		return inst, nil
	}
	full, err := v.full()
	if err != nil {
		return nil, &ToolArgsError{Code: CodeInvalidArgs, Issues: []Issue{{Message: "the tool's own schema is broken, so no arguments can be checked: " + err.Error()}}}
	}
	err = full.schema.Validate(inst)
	if err == nil {
		return inst, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, &ToolArgsError{Code: CodeInvalidArgs, Issues: []Issue{{Message: err.Error()}}}
	}
	var issues []Issue
	v.flatten(ve, full.doc, &issues)
	if len(issues) == 0 { // cannot happen: a failed validation has a leaf
		issues = append(issues, Issue{Message: ve.Error()})
	}
	slices.SortFunc(issues, func(a, b Issue) int {
		if c := strings.Compare(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	issues = slices.Compact(issues)
	return nil, &ToolArgsError{Code: CodeInvalidArgs, Issues: issues}
}

// printer words the validator's remaining messages. Built on first use:
// building it costs about a millisecond of every start-up otherwise.
var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// flatten turns the validator's error tree into leaf issues. Wrapper nodes
// (the root "validation failed", $ref, allOf) are descended; anyOf/oneOf
// become one issue at their location instead of one per failed branch,
// which only confuses a model.
func (v *Validator) flatten(e *jsonschema.ValidationError, doc any, out *[]Issue) {
	ptr := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			v.flatten(c, doc, out)
		}
		if len(e.Causes) > 0 {
			return
		}
	case *kind.AnyOf, *kind.OneOf:
		msg := "does not match any of the allowed shapes"
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 1 {
			msg = "matches more than one of the allowed shapes; it must match exactly one"
		}
		*out = append(*out, Issue{Pointer: ptr, Message: msg})
		return
	case *kind.Required:
		for _, name := range k.Missing {
			*out = append(*out, Issue{Pointer: ptr, Message: fmt.Sprintf("missing required property %q", name)})
		}
		return
	case *kind.AdditionalProperties:
		allowed := propertiesAt(doc, e.SchemaURL)
		for _, name := range k.Properties {
			msg := fmt.Sprintf("unknown property %q", name)
			if hint := caseFold(name, allowed); hint != "" {
				msg += fmt.Sprintf("; property names are case-sensitive: use %q", hint)
			} else if len(allowed) > 0 {
				msg += "; allowed properties: " + quoteAll(allowed)
			} else {
				msg += "; this object takes no properties"
			}
			*out = append(*out, Issue{Pointer: ptr + "/" + escape(name), Message: msg})
		}
		return
	case *kind.Type:
		got := k.Got
		if got == "number" && slices.Contains(k.Want, "integer") {
			got = "a number with a fractional part"
		}
		*out = append(*out, Issue{Pointer: ptr, Message: fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), got)})
		return
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			want[i] = string(b)
		}
		got, _ := json.Marshal(k.Got)
		*out = append(*out, Issue{Pointer: ptr, Message: fmt.Sprintf("got %s; must be one of %s", got, strings.Join(want, ", "))})
		return
	}
	*out = append(*out, Issue{Pointer: ptr, Message: describe(e.ErrorKind)})
}

// describe words the bound violations as the rule first, the offending
// value second; other kinds keep the validator's own wording.
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Minimum:
		return fmt.Sprintf("must be ≥ %s (got %s)", k.Want.RatString(), k.Got.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("must be ≤ %s (got %s)", k.Want.RatString(), k.Got.RatString())
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("must be > %s (got %s)", k.Want.RatString(), k.Got.RatString())
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("must be < %s (got %s)", k.Want.RatString(), k.Got.RatString())
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long (got %d)", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long (got %d)", k.Want, k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items (got %d)", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items (got %d)", k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("must match the regular expression %s", k.Want)
	}
	return k.LocalizedString(printer())
}

// propertiesAt names the declared properties of the object schema at
// schemaURL ("mem:///parameters.json#/properties/opts"), sorted.
func propertiesAt(doc any, schemaURL string) []string {
	_, frag, _ := strings.Cut(schemaURL, "#")
	node := doc
	for tok := range strings.SplitSeq(frag, "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	obj, _ := node.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func caseFold(name string, allowed []string) string {
	for _, a := range allowed {
		if a != name && strings.EqualFold(a, name) {
			return a
		}
	}
	return ""
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escape(tok))
	}
	return b.String()
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// ErrorCode is the registry error code of the failure (INVALID_ARGS).
func (e *ToolArgsError) ErrorCode() string { return e.Code }
