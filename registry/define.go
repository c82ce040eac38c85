package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/presentation"
)

// Spec is everything about a typed tool except its body and its
// parameters, which come from the Args type A. The hooks receive the
// decoded, validated arguments.
type Spec[A any] struct {
	Name        string
	Title       string
	Description string
	Kind        presentation.ToolCallKind
	TimeoutMs   float64

	// PresentCall, optional, describes the call before it runs. It is not
	// called with arguments that fail validation (the call then gets a
	// generic card titled with the tool's name).
	PresentCall func(call Call, args A) presentation.CallView
	// PresentResult, optional, describes the completed call.
	PresentResult func(call Call, args A, r Result) *presentation.ResultView
	// Subjects, optional, names what the call touches for policy. Invalid
	// arguments have no subjects: such a call fails before it does anything.
	Subjects func(call Call, args A) []Subject
	// Preview, optional, shows what the call would do before it is
	// allowed (see [Definition.Preview]). It must not change anything.
	// Invalid arguments have no preview.
	Preview func(ctx context.Context, call Call, args A) (*presentation.ResultView, error)
}

// Define builds a typed tool. The Args struct A is the single source of
// truth: its fields and tags become the tool's [SchemaSpec] and JSON Schema,
// and at call time the raw arguments are validated against that schema
// before encoding/json decodes them into A, so body receives typed
// arguments with zero casts.
//
// Tags on the fields of A:
//   - json: the property name (the Go field name if absent; "-" skips the
//     field). A property is required unless its field is a pointer or is
//     tagged omitempty/omitzero. An optional field must be able to say
//     "absent": a pointer, a slice or a map (nil means absent). An
//     omitempty int, string, bool or struct is refused, because its zero
//     value would be indistinguishable from absence.
//   - desc: the description shown to the model.
//   - enum:"a|b": allowed values, for strings and string slices only.
//   - default: the value the body should assume when the property is
//     absent, on optional fields only; a bare string for string fields, a
//     JSON literal otherwise. It is checked against the field's type and
//     schema and advertised to the model, not injected (santhosh-tekuri
//     does not apply defaults; the body applies it: nil ⇒ default).
//   - min, max: bounds of a number, the length of a string (in code
//     points), or the length of an array.
//   - pattern: a regular expression a string must match (unanchored, as
//     JSON Schema has it; write ^…$ to anchor).
//
// Go integers become "integer", uint and small ints carry their range.
// Nested structs become closed objects, slices arrays, map[string]T an
// object of T values. Embedded structs without a JSON name are promoted.
// Interfaces, channels, funcs, complex numbers, maps with non-string keys,
// []byte, recursive types and types with custom JSON decoding are refused.
//
// Every mistake in A is reported by Define as a *FieldError naming the
// field (joined with errors.Join when there are several), never at the
// first call. Define also checks what [Registry] checks (name,
// description, timeout).
func Define[A any](spec Spec[A], body func(ctx context.Context, call Call, args A) (Result, error)) (*Definition, error) {
	if body == nil {
		return nil, fmt.Errorf("registry: tool %q: nil body", spec.Name)
	}
	root, err := deriveSpec(spec.Name, reflect.TypeFor[A]())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	root.jsonSchema(&buf)
	params := json.RawMessage(buf.Bytes())
	v := derivedValidator(params, newChecker(root))
	var ok passed // texts that passed v
	decode := func(raw json.RawMessage) (A, error) {
		var a A
		if !ok.has(raw) {
			if _, err := v.parse(raw); err != nil {
				err.(*ToolArgsError).Tool = spec.Name
				return a, err
			}
			ok.add(raw)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			return a, nil
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			// Validation passed, so only a number Go cannot hold gets
			// here: an int64 past 2^63, a float32 past its max, or 1.0
			// (an integer to JSON Schema, not to encoding/json).
			return a, &ToolArgsError{Code: CodeInvalidArgs, Tool: spec.Name, Issues: []Issue{decodeIssue(err)}}
		}
		return a, nil
	}
	d := &Definition{
		Name:        spec.Name,
		Title:       spec.Title,
		Description: spec.Description,
		Parameters:  params,
		Kind:        spec.Kind,
		TimeoutMs:   spec.TimeoutMs,
		spec:        root,
		validate: func(raw json.RawMessage) error {
			_, err := decode(raw)
			return err
		},
		Execute: func(ctx context.Context, call Call, raw json.RawMessage) (Result, error) {
			a, err := decode(raw)
			if err != nil {
				return Result{}, err
			}
			return body(ctx, call, a)
		},
	}
	if f := spec.PresentCall; f != nil {
		d.PresentCall = func(call Call) presentation.CallView {
			a, err := decode(call.Arguments())
			if err != nil {
				title := spec.Title
				if title == "" {
					title = spec.Name
				}
				return presentation.CallView{Title: title, Kind: spec.Kind}
			}
			return f(call, a)
		}
	}
	if f := spec.PresentResult; f != nil {
		d.PresentResult = func(call Call, r Result) *presentation.ResultView {
			a, err := decode(call.Arguments())
			if err != nil {
				return nil
			}
			return f(call, a, r)
		}
	}
	if f := spec.Subjects; f != nil {
		d.Subjects = func(call Call) []Subject {
			a, err := decode(call.Arguments())
			if err != nil {
				return nil
			}
			return f(call, a)
		}
	}
	if f := spec.Preview; f != nil {
		d.Preview = func(ctx context.Context, call Call) (*presentation.ResultView, error) {
			a, err := decode(call.Arguments())
			if err != nil {
				return nil, err
			}
			return f(ctx, call, a)
		}
	}
	if err := checkDefinition(d); err != nil {
		return nil, err
	}
	return d, nil
}

// MustDefine is [Define] for package-level variables: it panics on error.
func MustDefine[A any](spec Spec[A], body func(ctx context.Context, call Call, args A) (Result, error)) *Definition {
	d, err := Define(spec, body)
	if err != nil {
		panic(err)
	}
	return d
}

func decodeIssue(err error) Issue {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		ptr := ""
		if te.Field != "" {
			ptr = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		return Issue{Pointer: ptr, Message: numberAdvice(strings.TrimPrefix(te.Value, "number "), te.Type)}
	}
	return Issue{Message: err.Error()}
}

// numberAdvice words why a number that passed the schema does not fit
// its Go field: JSON Schema calls 1.0 and 2e2 integers, encoding/json
// does not decode them into one, and a Go integer has a range.
func numberAdvice(text string, t reflect.Type) string {
	if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 && strings.ContainsAny(text, ".eE") && fits(t, f) {
		return fmt.Sprintf("%s is a whole number, but write it without a decimal point or exponent, as %d", text, int64(f))
	}
	lo, hi := goRange(t)
	if lo == "" {
		return fmt.Sprintf("%s cannot be stored in this property (a Go %s)", text, t)
	}
	return fmt.Sprintf("%s cannot be stored in this property (a Go %s): send a whole number between %s and %s", text, t, lo, hi)
}

// fits reports whether the whole number f fits a Go value of type t.
func fits(t reflect.Type, f float64) bool {
	v := reflect.Zero(t)
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return !v.OverflowInt(int64(f))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return f >= 0 && !v.OverflowUint(uint64(f))
	}
	return true
}

// goRange is the range of a Go integer type, as text ("" for others).
func goRange(t reflect.Type) (lo, hi string) {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "0", strconv.FormatUint(1<<t.Bits()-1, 10)
	}
	return "", ""
}
