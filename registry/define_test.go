package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dsh-tools/dshd/host"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/presentation"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type Base struct {
	CWD *string `json:"cwd,omitempty" desc:"Working directory"`
}

type Inner struct {
	Line int     `json:"line" min:"1"`
	Note *string `json:"note,omitempty" max:"3"`
}

type Options struct {
	*Base
	Verbose *bool `json:"verbose,omitempty"`
}

// allVocabulary exercises every item of the vocabulary.
type allVocabulary struct {
	Base                        // embedded: promoted
	Path     string             `json:"path" desc:"File to read" pattern:"^\\S+$" min:"1" max:"4096"`
	Mode     *string            `json:"mode,omitempty" enum:"text|binary" default:"text"`
	Limit    *int               `json:"limit,omitempty" min:"1" max:"2000" default:"200"`
	Ratio    *float64           `json:"ratio,omitempty" min:"0" max:"1"`
	Small    *int8              `json:"small,omitempty"`
	Count    uint               `json:"count"`
	Force    *bool              `json:"force,omitempty" default:"false"`
	Tags     []string           `json:"tags,omitempty" enum:"a|b" max:"2"`
	Ranges   []Inner            `json:"ranges,omitempty" desc:"Line ranges"`
	Nested   Inner              `json:"nested"`
	Opts     *Options           `json:"opts,omitempty"`
	Env      map[string]string  `json:"env,omitempty"`
	Pair     [2]int             `json:"pair"`
	Weights  map[string]float64 `json:"weights,omitempty" default:"{\"a\":1}"`
	NoTag    string
	Skipped  string `json:"-"`
	internal string //nolint:unused // unexported: skipped
}

func TestDeriveGolden(t *testing.T) {
	d, err := Define(Spec[allVocabulary]{Name: "all", Description: "All of it."}, nop[allVocabulary])
	if err != nil {
		t.Fatal(err)
	}
	// Define compiles the derived schema only when a call is rejected, so
	// the vocabulary's every keyword must compile here.
	if _, err := CompileSchema(d.Parameters); err != nil {
		t.Fatalf("the derived schema does not compile: %v", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, d.Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	golden := filepath.Join("testdata", "all_vocabulary.schema.json")
	if *update {
		if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("schema differs from %s (run with -update if intended):\n%s", golden, pretty.Bytes())
	}
}

func TestDeriveSpec(t *testing.T) {
	d := MustDefine(Spec[allVocabulary]{Name: "all", Description: "All of it."}, nop[allVocabulary])
	spec := d.Spec()
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	tests := []struct {
		name string
		got  SchemaProp
		want SchemaProp
	}{
		{"required string with bounds", spec["path"], SchemaProp{Type: TypeString, Required: true, Description: "File to read", Pattern: `^\S+$`, MinLength: i(1), MaxLength: i(4096)}},
		{"optional enum with default", spec["mode"], SchemaProp{Type: TypeString, Enum: []string{"text", "binary"}, Default: json.RawMessage(`"text"`)}},
		{"integer with bounds", spec["limit"], SchemaProp{Type: TypeInteger, Minimum: f(1), Maximum: f(2000), Default: json.RawMessage(`200`)}},
		{"number", spec["ratio"], SchemaProp{Type: TypeNumber, Minimum: f(0), Maximum: f(1)}},
		{"int8 carries its range", spec["small"], SchemaProp{Type: TypeInteger, Minimum: f(-128), Maximum: f(127)}},
		{"uint is non-negative", spec["count"], SchemaProp{Type: TypeInteger, Required: true, Minimum: f(0)}},
		{"boolean", spec["force"], SchemaProp{Type: TypeBoolean, Default: json.RawMessage(`false`)}},
		{"string slice: enum on items", spec["tags"], SchemaProp{Type: TypeArray, MaxItems: i(2), Items: &SchemaProp{Type: TypeString, Required: true, Enum: []string{"a", "b"}}}},
		{"promoted from embedded struct", spec["cwd"], SchemaProp{Type: TypeString, Description: "Working directory"}},
		{"field without tag", spec["NoTag"], SchemaProp{Type: TypeString, Required: true}},
		{"map", spec["env"], SchemaProp{Type: TypeObject, Values: &SchemaProp{Type: TypeString, Required: true}}},
		{"fixed array", spec["pair"], SchemaProp{Type: TypeArray, Required: true, MinItems: i(2), MaxItems: i(2), Items: &SchemaProp{Type: TypeInteger, Required: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.got.order, tt.want.order = nil, nil
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", tt.got, tt.want)
			}
		})
	}
	if _, ok := spec["Skipped"]; ok {
		t.Error(`json:"-" field derived`)
	}
	if _, ok := spec["internal"]; ok {
		t.Error("unexported field derived")
	}
	// Nested objects, arrays of objects, pointers to structs (with an
	// embedded pointer promoted).
	if n := spec["nested"]; n.Type != TypeObject || !n.Required || !n.Properties["line"].Required || n.Properties["note"].Required {
		t.Errorf("nested: %+v", n)
	}
	if r := spec["ranges"]; r.Required || r.Items == nil || r.Items.Type != TypeObject || r.Items.Properties["line"].Type != TypeInteger {
		t.Errorf("ranges: %+v", r)
	}
	if o := spec["opts"]; o.Required || o.Properties["cwd"].Type != TypeString || o.Properties["verbose"].Type != TypeBoolean {
		t.Errorf("opts: %+v", o)
	}
	// Spec returns a copy.
	spec["path"] = SchemaProp{}
	if d.Spec()["path"].Type != TypeString {
		t.Error("Spec() exposes the definition's own map")
	}
	if (&Definition{}).Spec() != nil {
		t.Error("a raw definition has a spec")
	}
}

func nop[A any](context.Context, Call, A) (Result, error) { return TextResult("ok"), nil }

type customDecoded struct{ time.Time }

func TestDefineRejectsBadArgsTypes(t *testing.T) {
	type recursive struct {
		Next *recursive `json:"next,omitempty"`
	}
	tests := []struct {
		name  string
		def   func() error
		field string
		want  error
	}{
		{"not a struct", defineErr[int](), "", ErrUnsupportedType},
		{"map with int keys", defineErr[struct {
			M map[int]string `json:"m"`
		}](), "M", ErrUnsupportedType},
		{"channel", defineErr[struct {
			C chan int `json:"c"`
		}](), "C", ErrUnsupportedType},
		{"func", defineErr[struct {
			F func() `json:"f"`
		}](), "F", ErrUnsupportedType},
		{"interface", defineErr[struct {
			V any `json:"v"`
		}](), "V", ErrUnsupportedType},
		{"bytes", defineErr[struct {
			B []byte `json:"b"`
		}](), "B", ErrUnsupportedType},
		{"custom decoding", defineErr[struct {
			T time.Time `json:"t"`
		}](), "T", ErrUnsupportedType},
		{"embedded custom decoding", defineErr[struct{ customDecoded }](), "customDecoded", ErrUnsupportedType},
		{"recursive", defineErr[recursive](), "Next", ErrUnsupportedType},
		{"pointer to pointer", defineErr[struct {
			P **int `json:"p"`
		}](), "P", ErrUnsupportedType},
		{"enum on a non-string", defineErr[struct {
			N int `json:"n" enum:"1|2"`
		}](), "N", ErrBadTag},
		{"empty enum value", defineErr[struct {
			S string `json:"s" enum:"a||b"`
		}](), "S", ErrBadTag},
		{"default of the wrong type", defineErr[struct {
			N *int `json:"n,omitempty" default:"ten"`
		}](), "N", ErrBadTag},
		{"default outside the enum", defineErr[struct {
			S *string `json:"s,omitempty" enum:"a|b" default:"c"`
		}](), "S", ErrBadTag},
		{"default below min", defineErr[struct {
			N *int `json:"n,omitempty" min:"1" default:"0"`
		}](), "N", ErrBadTag},
		{"default on a required field", defineErr[struct {
			S string `json:"s" default:"x"`
		}](), "S", ErrBadTag},
		{"duplicate JSON name", defineErr[struct {
			A string `json:"B"`
			B string // the Go name is the JSON name
		}](), "B", ErrBadTag},
		{"duplicate through embedding", defineErr[struct {
			Base
			CWD string `json:"cwd"`
		}](), "CWD", ErrBadTag},
		{"optional scalar that cannot say absent", defineErr[struct {
			N int `json:"n,omitempty"`
		}](), "N", ErrBadTag},
		{"string option", defineErr[struct {
			N int `json:"n,string"`
		}](), "N", ErrBadTag},
		{"bad pattern", defineErr[struct {
			S string `json:"s" pattern:"("`
		}](), "S", ErrBadTag},
		{"fractional min on an integer", defineErr[struct {
			N int `json:"n" min:"1.5"`
		}](), "N", ErrBadTag},
		{"NaN min", defineErr[struct {
			X *float64 `json:"x,omitempty" min:"NaN"`
		}](), "X", ErrBadTag},
		{"infinite max", defineErr[struct {
			X float64 `json:"x" max:"+Inf"`
		}](), "X", ErrBadTag},
		{"min on a bool", defineErr[struct {
			B bool `json:"b" min:"1"`
		}](), "B", ErrBadTag},
		{"bad property name", defineErr[struct {
			S string `json:"a b"`
		}](), "S", ErrBadTag},
		{"nested field is named by its path", defineErr[struct {
			Inner struct {
				C chan int `json:"c"`
			} `json:"inner"`
		}](), "Inner.C", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.def()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FieldError", err)
			}
			if fe.Field != tt.field || fe.Tool != "bad" || !errors.Is(err, tt.want) {
				t.Errorf("got field %q tool %q (%v), want field %q wrapping %v", fe.Field, fe.Tool, err, tt.field, tt.want)
			}
			if tt.field != "" && !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message does not name the field: %v", err)
			}
		})
	}
}

func defineErr[A any]() func() error {
	return func() error {
		_, err := Define(Spec[A]{Name: "bad", Description: "Bad."}, nop[A])
		return err
	}
}

func TestDefineReportsEveryFieldMistake(t *testing.T) {
	type twoMistakes struct {
		A chan int `json:"a"`
		B int      `json:"b" enum:"x"`
	}
	_, err := Define(Spec[twoMistakes]{Name: "bad", Description: "Bad."}, nop[twoMistakes])
	if err == nil || !strings.Contains(err.Error(), "field A") || !strings.Contains(err.Error(), "field B") {
		t.Fatalf("got %v", err)
	}
	if _, err := Define(Spec[Inner]{Name: "bad name", Description: "x"}, nop[Inner]); err == nil {
		t.Error("bad tool name accepted at Define")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustDefine did not panic")
		}
	}()
	MustDefine(Spec[twoMistakes]{Name: "bad", Description: "Bad."}, nop[twoMistakes])
}

type readArgs struct {
	Path   string   `json:"path" desc:"File to read"`
	Offset *int     `json:"offset,omitempty" min:"1"`
	Mode   *string  `json:"mode,omitempty" enum:"text|binary"`
	Ranges []Inner  `json:"ranges,omitempty"`
	Env    *Options `json:"env,omitempty"`
}

func TestCallTimeValidation(t *testing.T) {
	d := MustDefine(Spec[readArgs]{Name: "read", Description: "Read."}, nop[readArgs])
	tests := []struct {
		name string
		args string
		want []Issue // pointer + a substring of the message
	}{
		{"unknown key", `{"path":"a","bogus":1}`, []Issue{{"/bogus", `unknown property "bogus"; allowed properties: "env", "mode", "offset", "path", "ranges"`}}},
		{"key differing by case", `{"PATH":"a"}`, []Issue{{"", `missing required property "path"`}, {"/PATH", `use "path"`}}},
		{"case-differing duplicate", `{"path":"a","Path":"b"}`, []Issue{{"/Path", `use "path"`}}},
		{"wrong type", `{"path":1}`, []Issue{{"/path", "expected string, got number"}}},
		{"missing required", `{}`, []Issue{{"", `missing required property "path"`}}},
		{"enum miss", `{"path":"a","mode":"hex"}`, []Issue{{"/mode", `got "hex"; must be one of "text", "binary"`}}},
		{"below minimum", `{"path":"a","offset":0}`, []Issue{{"/offset", "must be ≥ 1 (got 0)"}}},
		{"not an integer", `{"path":"a","offset":1.5}`, []Issue{{"/offset", "expected integer, got a number with a fractional part"}}},
		{"null is not absent", `{"path":"a","offset":null}`, []Issue{{"/offset", "expected integer, got null"}}},
		{"nested, every issue", `{"path":"a","ranges":[{"line":0,"x":1},{}],"env":{"verbose":"yes"}}`, []Issue{
			{"/env/verbose", "expected boolean, got string"},
			{"/ranges/0/line", "must be ≥ 1 (got 0)"},
			{"/ranges/0/x", `unknown property "x"`},
			{"/ranges/1", `missing required property "line"`},
		}},
		{"not an object", `[1]`, []Issue{{"", "expected object, got array"}}},
		{"not JSON", `{"path":`, []Issue{{"", "not valid JSON"}}},
		{"out of Go's range", `{"path":"a","offset":1e30}`, []Issue{{"/offset", "send a whole number between"}}},
		{"integer written with a decimal point", `{"path":"a","offset":1.0}`, []Issue{{"/offset", "write it without a decimal point or exponent, as 1"}}},
		{"integer written with an exponent", `{"path":"a","offset":2e2}`, []Issue{{"/offset", "as 200"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Execute(context.Background(), nil, json.RawMessage(tt.args))
			var ae *ToolArgsError
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want *ToolArgsError", err)
			}
			if ae.Code != CodeInvalidArgs || ae.Tool != "read" {
				t.Errorf("code %q tool %q", ae.Code, ae.Tool)
			}
			if len(ae.Issues) != len(tt.want) {
				t.Fatalf("got %d issues, want %d:\n%v", len(ae.Issues), len(tt.want), err)
			}
			for i, w := range tt.want {
				if g := ae.Issues[i]; g.Pointer != w.Pointer || !strings.Contains(g.Message, w.Message) {
					t.Errorf("issue %d: got %+v, want pointer %q and %q", i, g, w.Pointer, w.Message)
				}
			}
			if strings.Contains(err.Error(), "oneOf") || strings.Contains(err.Error(), "jsonschema") {
				t.Errorf("validator noise in %q", err)
			}
		})
	}
}

func TestToolArgsErrorResult(t *testing.T) {
	d := MustDefine(Spec[readArgs]{Name: "read", Description: "Read."}, nop[readArgs])
	_, err := d.Execute(context.Background(), nil, json.RawMessage(`{"Path":"a"}`))
	var ae *ToolArgsError
	if !errors.As(err, &ae) {
		t.Fatal(err)
	}
	if err := d.ValidateArgs(json.RawMessage(`{"Path":"a"}`)); err == nil || err.Error() != ae.Error() {
		t.Errorf("ValidateArgs disagrees with Execute: %v", err)
	}
	if err := d.ValidateArgs(json.RawMessage(`{"path":"a"}`)); err != nil {
		t.Error(err)
	}
	if err := raw("x").ValidateArgs(json.RawMessage(`nonsense`)); err != nil {
		t.Error("a raw definition validated its own arguments outside Execute")
	}
	r := ae.Result()
	if !r.IsError || r.Error.Code != CodeInvalidArgs || r.Content[0].Text != err.Error() {
		t.Fatalf("%+v", r)
	}
	var details struct {
		Tool   string  `json:"tool"`
		Issues []Issue `json:"issues"`
	}
	if err := json.Unmarshal(r.Error.Details, &details); err != nil || details.Tool != "read" || len(details.Issues) != 2 {
		t.Fatalf("details %s: %v", r.Error.Details, err)
	}
	const want = "Invalid arguments for tool \"read\" (2 problems):\n" +
		"- arguments: missing required property \"path\"\n" +
		"- /Path: unknown property \"Path\"; property names are case-sensitive: use \"path\"\n" +
		"Fix every problem listed and call the tool again."
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
}

func TestAbsentIsDistinctFromZero(t *testing.T) {
	var got readArgs
	d := MustDefine(Spec[readArgs]{Name: "read", Description: "Read."},
		func(_ context.Context, _ Call, a readArgs) (Result, error) { got = a; return Result{}, nil })
	if _, err := d.Execute(context.Background(), nil, json.RawMessage(`{"path":""}`)); err != nil {
		t.Fatal(err)
	}
	if got.Offset != nil || got.Mode != nil || got.Ranges != nil || got.Env != nil {
		t.Errorf("absent optional properties are not nil: %+v", got)
	}
	if _, err := d.Execute(context.Background(), nil, json.RawMessage(`{"path":"","mode":"text","ranges":[],"offset":1}`)); err != nil {
		t.Fatal(err)
	}
	if got.Offset == nil || *got.Offset != 1 || got.Mode == nil || got.Ranges == nil {
		t.Errorf("present properties lost: %+v", got)
	}
	// Empty arguments count as {} for a tool without required properties.
	e := MustDefine(Spec[Options]{Name: "opts", Description: "Opts."}, nop[Options])
	if _, err := e.Execute(context.Background(), nil, nil); err != nil {
		t.Errorf("empty arguments: %v", err)
	}
}

type fakeCall struct{ args string }

func (c fakeCall) ToolName() string           { return "read" }
func (c fakeCall) CallID() string             { return "call-1" }
func (c fakeCall) Arguments() json.RawMessage { return json.RawMessage(c.args) }
func (c fakeCall) Scope() string              { return "s" }
func (c fakeCall) Host() host.Host            { return nil }

func TestTypedHooks(t *testing.T) {
	d := MustDefine(Spec[readArgs]{
		Name: "read", Title: "Read file", Description: "Read.", Kind: presentation.KindRead,
		PresentCall: func(_ Call, a readArgs) presentation.CallView {
			return presentation.CallView{Title: "Read " + a.Path, Kind: presentation.KindRead}
		},
		PresentResult: func(_ Call, a readArgs, r Result) *presentation.ResultView {
			return &presentation.ResultView{Card: &presentation.GenericCard{Title: a.Path}}
		},
		Subjects: func(_ Call, a readArgs) []Subject { return []Subject{{Kind: SubjectPath, Value: a.Path}} },
		Preview: func(_ context.Context, _ Call, a readArgs) (*presentation.ResultView, error) {
			return &presentation.ResultView{Card: &presentation.GenericCard{Title: "preview " + a.Path}}, nil
		},
	}, nop[readArgs])
	ok := fakeCall{`{"path":"/x"}`}
	if v, err := d.Preview(context.Background(), ok); err != nil || v == nil || v.Card.(*presentation.GenericCard).Title != "preview /x" {
		t.Errorf("Preview: %+v, %v", v, err)
	}
	if v := d.PresentCall(ok); v.Title != "Read /x" {
		t.Errorf("PresentCall: %+v", v)
	}
	if v := d.PresentResult(ok, Result{}); v == nil {
		t.Error("PresentResult: nil")
	}
	if s := d.Subjects(ok); len(s) != 1 || s[0].Value != "/x" {
		t.Errorf("Subjects: %+v", s)
	}
	bad := fakeCall{`{"PATH":"/x"}`}
	if v := d.PresentCall(bad); v.Title != "Read file" || v.Kind != presentation.KindRead {
		t.Errorf("PresentCall of invalid args: %+v", v)
	}
	if d.PresentResult(bad, Result{}) != nil || d.Subjects(bad) != nil {
		t.Error("hooks ran on invalid arguments")
	}
	var argsErr *ToolArgsError
	if v, err := d.Preview(context.Background(), bad); v != nil || !errors.As(err, &argsErr) {
		t.Errorf("Preview of invalid args: %+v, %v; want no view and a *ToolArgsError", v, err)
	}
	plain := MustDefine(Spec[readArgs]{Name: "read", Description: "Read."}, nop[readArgs])
	if plain.PresentCall != nil || plain.PresentResult != nil || plain.Subjects != nil || plain.Preview != nil {
		t.Error("absent hooks became non-nil")
	}
}

func TestCompileSchemaForRawDefinitions(t *testing.T) {
	v, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"q":{"oneOf":[{"type":"string"},{"type":"integer"}]},
		"n":{"type":"object","properties":{"deep":{"type":"string"}},"additionalProperties":false}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(json.RawMessage(`{"q":"x","n":{"deep":"y"}}`)); err != nil {
		t.Fatal(err)
	}
	err = v.Validate(json.RawMessage(`{"q":true,"n":{"Deep":"y"}}`))
	var ae *ToolArgsError
	if !errors.As(err, &ae) || len(ae.Issues) != 2 {
		t.Fatalf("got %v", err)
	}
	if ae.Issues[0].Pointer != "/n/Deep" || !strings.Contains(ae.Issues[0].Message, `use "deep"`) {
		t.Errorf("issue 0: %+v", ae.Issues[0])
	}
	if ae.Issues[1].Pointer != "/q" || !strings.Contains(ae.Issues[1].Message, "allowed shapes") {
		t.Errorf("oneOf is not one issue: %+v", ae.Issues)
	}
	for _, bad := range []string{`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, `{"type":7}`, `{`} {
		var se *SchemaError
		if _, err := CompileSchema(json.RawMessage(bad)); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want *SchemaError", bad, err)
		}
	}
}

// FuzzValidateArgs holds the allocation-free checker to santhosh-tekuri's
// verdict on a derived schema: it decides acceptance on its own, so the two
// must agree on every input. A rejection must always carry issues.
func FuzzValidateArgs(f *testing.F) {
	d := MustDefine(Spec[allVocabulary]{Name: "all", Description: "All."}, nop[allVocabulary])
	full, err := CompileSchema(d.Parameters)
	if err != nil {
		f.Fatal(err)
	}
	fast := newChecker(d.spec)
	for _, s := range []string{
		`{"path":"a","count":0,"nested":{"line":1},"NoTag":""}`,
		`{"path":"a b","count":-1,"nested":{"line":0},"NoTag":"","mode":"hex"}`,
		`{"path":"a","count":1,"nested":{"line":1,"note":"abcd"},"NoTag":"","tags":["a","b","a"],"pair":[1,2]}`,
		`{"path":"a","count":1.0,"nested":{"line":1},"NoTag":"","env":{"k":"v"},"weights":{"w":0.5},"small":-129}`,
		`{"path":"a","count":1,"nested":{"line":1},"NoTag":"","opts":{"cwd":"/","verbose":true},"ranges":[{"line":2}]}`,
		`{"PATH":"a"}`, `[]`, `null`, `{"path":"ü","count":1e2,"nested":{"line":1},"NoTag":"","limit":2000,"ratio":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var inst any
		if json.Unmarshal(raw, &inst) != nil {
			return
		}
		fastOK := fast.valid(inst)
		compiled, err := full.full()
		if err != nil {
			t.Fatal(err)
		}
		fullErr := compiled.schema.Validate(inst)
		if fastOK != (fullErr == nil) {
			t.Fatalf("checker says %v, santhosh-tekuri says %v, on %s", fastOK, fullErr, raw)
		}
		_, err = d.Execute(context.Background(), nil, raw)
		var ae *ToolArgsError
		if err != nil && (!errors.As(err, &ae) || len(ae.Issues) == 0 || slices.ContainsFunc(ae.Issues, func(i Issue) bool { return i.Message == "" })) {
			t.Fatalf("bad rejection %v on %s", err, raw)
		}
	})
}

// TestIssuesGolden pins the wording a model reads for every kind of
// violation the DSL's keywords can produce.
func TestIssuesGolden(t *testing.T) {
	d := MustDefine(Spec[allVocabulary]{Name: "all", Description: "All."}, nop[allVocabulary])
	_, err := d.Execute(context.Background(), nil, json.RawMessage(`{"path":"a b","count":-1,
		"nested":{"line":0,"note":"abcd"},"NoTag":"","tags":["a","b","c"],"pair":[1],"small":-129,
		"ratio":2,"limit":1.5,"Mode":"text","force":"yes","env":{"k":1},"opts":{"extra":true}}`))
	if err == nil {
		t.Fatal("accepted")
	}
	got := []byte(err.Error() + "\n")
	golden := filepath.Join("testdata", "all_vocabulary.issues.txt")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("issues differ from %s (run with -update if intended):\n%s", golden, got)
	}
}

// TestArgumentsValidatedOnceStillRefuseBadOnes: Define keeps the texts
// that passed validation so a call's later stages skip it; what did not
// pass is refused every time, and no arguments at all (validated as {})
// are never taken for a kept text.
func TestArgumentsValidatedOnceStillRefuseBadOnes(t *testing.T) {
	type args struct {
		Path string `json:"path" min:"1"`
	}
	d := MustDefine(Spec[args]{Name: "t", Description: "A tool."}, func(_ context.Context, _ Call, a args) (Result, error) {
		return TextResult(a.Path), nil
	})
	steps := []struct {
		raw string
		ok  bool
	}{
		{`{"path":"a"}`, true},
		{`{"path":"a"}`, true}, // kept: not validated again
		{``, false},            // {} has no path
		{`{}`, false},
		{`{"path":""}`, false},
		{`{"path":"a"}`, true},
		{`{"path":7}`, false},
		{``, false},
	}
	for i, s := range steps {
		res, err := d.Execute(context.Background(), nil, json.RawMessage(s.raw))
		if got := err == nil; got != s.ok {
			t.Fatalf("step %d, %q: err %v, want ok=%v", i, s.raw, err, s.ok)
		}
		if s.ok && res.Content[0].Text != "a" {
			t.Fatalf("step %d: %+v", i, res)
		}
	}
	// More texts than are kept, then the first again: validated again,
	// and still accepted.
	for i := range 3 * passedSlots {
		if _, err := d.Execute(context.Background(), nil, json.RawMessage(fmt.Sprintf(`{"path":"p%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Execute(context.Background(), nil, json.RawMessage(`{"path":"a"}`)); err != nil {
		t.Fatal(err)
	}
}
