package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestAssertSupportedAccepts(t *testing.T) {
	for _, s := range schemaCorpus {
		if err := AssertSupported(json.RawMessage(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestAssertSupportedListsEveryViolation(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []Violation // Path and Keyword only
	}{
		{"root not object", `{"type":"string"}`, []Violation{{"", "type", ""}}},
		{"root without type", `{"properties":{}}`, []Violation{{"", "type", ""}}},
		{"not a schema", `[1]`, []Violation{{"", "", ""}}},
		{"combinators and refs", `{"type":"object","anyOf":[],"$ref":"#","properties":{"a":{"oneOf":[{"type":"string"}]}}}`,
			[]Violation{{"/$ref", "$ref", ""}, {"/anyOf", "anyOf", ""}, {"/properties/a/oneOf", "oneOf", ""}}},
		{"non-scalar enum and const", `{"type":"object","properties":{"a":{"enum":[[1]]},"b":{"const":{}}}}`,
			[]Violation{{"/properties/a/enum", "enum", ""}, {"/properties/b/const", "const", ""}}},
		{"empty enum", `{"type":"object","properties":{"a":{"enum":[]}}}`, []Violation{{"/properties/a/enum", "enum", ""}}},
		{"bad values", `{"type":"object","required":["a","a"],"additionalProperties":{},"properties":{"s":{"type":"text","minLength":-1,"maxLength":1.5,"pattern":"(","format":"email"}}}`,
			[]Violation{{"/additionalProperties", "additionalProperties", ""}, {"/properties/s/format", "format", ""},
				{"/properties/s/maxLength", "maxLength", ""}, {"/properties/s/minLength", "minLength", ""},
				{"/properties/s/pattern", "pattern", ""}, {"/properties/s/type", "type", ""}, {"/required", "required", ""}}},
		{"tuple items and type lists", `{"type":"object","properties":{"a":{"type":[],"items":[{}]},"b":{"type":["string","string"]}}}`,
			[]Violation{{"/properties/a/items", "items", ""}, {"/properties/a/type", "type", ""}, {"/properties/b/type", "type", ""}}},
		{"annotations must be JSON of the right shape", `{"type":"object","title":1,"description":[],"examples":{}}`,
			[]Violation{{"/description", "description", ""}, {"/examples", "examples", ""}, {"/title", "title", ""}}},
		{"property schema not an object", `{"type":"object","properties":{"a":true}}`, []Violation{{"/properties/a", "properties", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := AssertSupported(json.RawMessage(tt.schema))
			var se *OutputSchemaError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want *OutputSchemaError", err)
			}
			var got []Violation
			for _, v := range se.Violations {
				if v.Message == "" {
					t.Errorf("violation without a message: %+v", v)
				}
				got = append(got, Violation{Path: v.Path, Keyword: v.Keyword})
			}
			slices.SortFunc(got, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations\n got %v\nwant %v\n(%v)", got, tt.want, err)
			}
		})
	}
}

func TestValidateListsEveryViolation(t *testing.T) {
	schema := `{"type":"object","required":["name","tags","count"],"additionalProperties":false,"properties":{
		"name":{"type":"string","minLength":2,"pattern":"^[a-z]+$"},
		"count":{"type":"integer","minimum":0,"exclusiveMaximum":10},
		"tags":{"type":"array","maxItems":2,"items":{"type":"string","enum":["a","b"]}},
		"mode":{"const":"fast"},
		"nested":{"type":"object","required":["x"],"properties":{"x":{"type":["number","null"]}}}}}`
	tests := []struct {
		name  string
		value string
		want  []string // "path keyword"
	}{
		{"valid", `{"name":"ab","count":9,"tags":["a"],"mode":"fast","nested":{"x":null}}`, nil},
		{"integer admits 1.0", `{"name":"ab","count":1.0,"tags":[]}`, nil},
		{"everything wrong", `{"name":"A","count":10,"tags":["a","c","b"],"mode":"slow","nested":{},"extra":1}`,
			[]string{"/count exclusiveMaximum", "/extra additionalProperties", "/mode const", "/name minLength", "/name pattern",
				"/nested required", "/tags maxItems", "/tags/1 enum"}},
		{"missing and wrong types", `{"count":1.5,"nested":{"x":"1"}}`,
			[]string{" required", " required", "/count type", "/nested/x type"}},
		{"root type", `[]`, []string{" type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(json.RawMessage(schema), json.RawMessage(tt.value))
			var got []string
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("got %T %v", err, err)
				}
				for _, v := range ve.Violations {
					got = append(got, v.Path+" "+v.Keyword)
				}
				slices.Sort(got)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q\n(%v)", got, tt.want, err)
			}
		})
	}
}

type marshalsItself struct{}

func (marshalsItself) MarshalJSON() ([]byte, error) { return []byte(`{}`), nil }

type plainStruct struct{ A int }

type named string

func TestValidateRejectsNonJSONData(t *testing.T) {
	open := map[string]any{"type": "object"}
	cyclicMap := map[string]any{}
	cyclicMap["self"] = cyclicMap
	cyclicSlice := make([]any, 1)
	cyclicSlice[0] = cyclicSlice
	tests := []struct {
		name  string
		value any
		path  string
	}{
		{"NaN", map[string]any{"x": math.NaN()}, "/x"},
		{"+Inf", map[string]float64{"x": math.Inf(1)}, "/x"},
		{"-Inf in a slice", map[string]any{"x": []any{1, math.Inf(-1)}}, "/x/1"},
		{"int map keys", map[string]any{"x": map[int]string{1: "a"}}, "/x"},
		{"channel", map[string]any{"x": make(chan int)}, "/x"},
		{"func", map[string]any{"x": func() {}}, "/x"},
		{"complex", map[string]any{"x": 1i}, "/x"},
		{"cyclic map", cyclicMap, "/self"},
		{"cyclic slice", map[string]any{"x": cyclicSlice}, "/x/0"},
		{"time.Time", map[string]any{"x": time.Unix(0, 0)}, "/x"},
		{"custom marshaller", map[string]any{"x": marshalsItself{}}, "/x"},
		{"struct", map[string]any{"x": plainStruct{}}, "/x"},
		{"bad json.Number", map[string]any{"x": json.Number("1x")}, "/x"},
		{"huge exponent", json.RawMessage(`{"x":1e999999999}`), "/x"},
		{"bad RawMessage", map[string]any{"x": json.RawMessage(`{`)}, "/x"},
		{"invalid UTF-8 string", map[string]any{"x": "a\xff"}, "/x"},
		{"invalid UTF-8 key", map[string]any{"x": map[string]int{"\xfe": 1}}, "/x"},
		{"invalid UTF-8 in a RawMessage", map[string]any{"x": json.RawMessage("\"\xff\"")}, "/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(open, tt.value)
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0].Path != tt.path {
				t.Fatalf("got %v, want one violation at %q", err, tt.path)
			}
		})
	}
	// Plain Go data of every accepted shape passes.
	var nilPtr *int
	ok := map[string]any{"a": []int{1, 2}, "b": [2]bool{}, "c": named("x"), "d": &[]string{"s"},
		"e": nilPtr, "f": json.Number("1e3"), "g": json.RawMessage(`{"h":[1,2]}`), "i": uint8(3), "j": float32(1.5),
		"k": map[named]any{"l": nil}}
	if err := Validate(open, ok); err != nil {
		t.Fatal(err)
	}
	// A schema holding non-JSON data is refused the same way.
	if err := AssertSupported(map[string]any{"type": "object", "default": math.NaN()}); err == nil {
		t.Fatal("NaN default accepted")
	}
	if err := AssertSupported(map[string]any{"type": "object", "description": "\xff"}); err == nil {
		t.Fatal("a description that is not UTF-8 accepted")
	}
}

// schemaCorpus is the table corpus of supported schemas for the
// differential test; valueCorpus the values tried against each.
var schemaCorpus = []string{
	`{"type":"object"}`,
	`{"type":"object","additionalProperties":false}`,
	`{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`,
	`{"type":"object","properties":{"a":{"type":"integer","minimum":-1,"maximum":1e2}},"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.3}}}`,
	`{"type":"object","properties":{"a":{"type":["string","null"],"minLength":1,"maxLength":3}}}`,
	`{"type":"object","properties":{"a":{"pattern":"^x+$","enum":["x","xx",1,true,null]}}}`,
	`{"type":"object","properties":{"a":{"const":1}}}`,
	`{"type":"object","properties":{"a":{"const":null}}}`,
	`{"type":"object","properties":{"a":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"object","required":["b"],"properties":{"b":{"type":"boolean"}},"additionalProperties":false}}}}`,
	`{"type":"object","title":"t","description":"d","default":{"a":[1]},"examples":[1,"x"],"properties":{"a":{"type":"array","items":{"type":"integer"}}}}`,
	`{"type":"object","properties":{"a":{"minimum":0.1,"maxLength":2,"minItems":1}}}`,
	`{"type":"object","properties":{"a":{"type":"object","additionalProperties":true,"properties":{"é":{"type":"string","maxLength":1}}}}}`,
}

var valueCorpus = []string{
	`{}`, `[]`, `null`, `1`, `"x"`,
	`{"a":null}`, `{"a":"x"}`, `{"a":"xx"}`, `{"a":"xxxx"}`, `{"a":""}`, `{"a":"y"}`,
	`{"a":1}`, `{"a":1.0}`, `{"a":-1}`, `{"a":-2}`, `{"a":100}`, `{"a":100.5}`, `{"a":1e2}`, `{"a":101}`,
	`{"a":0}`, `{"a":0.1}`, `{"a":0.3}`, `{"a":0.29999999999999999}`, `{"a":0.30000000000000001}`,
	`{"a":true}`, `{"a":[]}`, `{"a":[{"b":true}]}`, `{"a":[{"b":1}]}`, `{"a":[{"b":true,"c":1}]}`,
	`{"a":[{}]}`, `{"a":[{"b":false},{"b":true},{"b":true}]}`, `{"a":[1,2]}`, `{"a":[1.5]}`,
	`{"a":{"é":"ü"}}`, `{"a":{"é":"üü"}}`, `{"a":{"x":1}}`, `{"b":1}`, `{"A":"x"}`,
}

// santhosh compiles schema with santhosh-tekuri/jsonschema (draft 2020-12).
func santhosh(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("santhosh-tekuri refuses a schema AssertSupported accepts: %s: %v", schema, err)
	}
	return s
}

func agree(t testing.TB, schema string, value []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return
	}
	ours := Validate(json.RawMessage(schema), json.RawMessage(value))
	var ve *ValidationError
	if ours != nil && !errors.As(ours, &ve) {
		t.Fatalf("schema %s: %v", schema, ours)
	}
	if ve != nil && ve.Violations[0].Keyword == "" {
		return // not plain JSON data by our range limits: santhosh has no opinion
	}
	theirs := santhosh(t, schema).Validate(inst)
	if (ours == nil) != (theirs == nil) {
		t.Errorf("disagreement on schema %s value %s:\n ours: %v\n santhosh-tekuri: %v", schema, value, ours, theirs)
	}
}

func TestDifferentialAgainstJSONSchema(t *testing.T) {
	for _, s := range schemaCorpus {
		for _, v := range valueCorpus {
			agree(t, s, []byte(v))
		}
	}
}

func FuzzValidate(f *testing.F) {
	for i, s := range schemaCorpus {
		f.Add([]byte(s), []byte(valueCorpus[i%len(valueCorpus)]))
		f.Add([]byte(s), []byte(valueCorpus[(i*7+3)%len(valueCorpus)]))
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		if len(schema) > 4096 || len(value) > 4096 {
			return
		}
		var s any
		if json.Unmarshal(schema, &s) != nil || AssertSupported(json.RawMessage(schema)) != nil {
			return
		}
		agree(t, string(schema), value)
	})
}

func ExampleValidate() {
	schema := json.RawMessage(`{"type":"object","required":["verdict"],"additionalProperties":false,
		"properties":{"verdict":{"enum":["pass","fail"]},"score":{"type":"integer","minimum":0}}}`)
	err := Validate(schema, map[string]any{"verdict": "maybe", "score": -1, "note": "x"})
	fmt.Println(err)
	// Output:
	// structured: value does not match the output schema (3):
	// - /note: additionalProperties: unknown property "note"
	// - /score: minimum: must be ≥ 0
	// - /verdict: enum: must be one of "pass", "fail"
}

// isJSONNumber agrees with encoding/json on what a number is.
func TestIsJSONNumber(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "7", "-12", "10", "0.5", "-0.25", "1e9", "1E+9", "2e-3", "1.5e10",
		"", "-", "01", "+1", ".5", "1.", "1.e3", "1e", "1e+", "0x1", "1 ", " 1", "--1", "1.5.5", "1e5e5", "Infinity",
	} {
		var v any
		want := json.Unmarshal([]byte(s), &v) == nil && strings.TrimSpace(s) == s && s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9')
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
