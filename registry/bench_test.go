package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// benchArgs is a typical five-field argument object.
type benchArgs struct {
	Path    string   `json:"path" desc:"File to read"`
	Offset  *int     `json:"offset,omitempty" min:"1"`
	Limit   *int     `json:"limit,omitempty" min:"1" max:"2000"`
	Mode    *string  `json:"mode,omitempty" enum:"text|binary"`
	Include []string `json:"include,omitempty"`
}

var benchRaw = json.RawMessage(`{"path":"/home/user/project/internal/server/handler.go","offset":120,"limit":200,"mode":"text","include":["*.go","*.md"]}`)

// BenchmarkDecodeArgs is validate + decode, the cost every typed call pays
// at its first decode: the texts differ (more of them than Define keeps as
// passed) and are as long as benchRaw. Read it against
// BenchmarkBareUnmarshal (same struct); BenchmarkDecodeArgsAgain is a
// call's later stages.
func BenchmarkDecodeArgs(b *testing.B) {
	var got benchArgs
	d := MustDefine(Spec[benchArgs]{Name: "read", Description: "Read a file."},
		func(_ context.Context, _ Call, a benchArgs) (Result, error) { got = a; return Result{}, nil })
	texts := make([]json.RawMessage, 4*passedSlots)
	for i := range texts {
		texts[i] = json.RawMessage(fmt.Sprintf(`{"path":"/home/user/project/internal/server/handler.go","offset":%d,"limit":200,"mode":"text","include":["*.go","*.md"]}`, 100+i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := d.Execute(context.Background(), nil, texts[i%len(texts)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	_ = got
}

// BenchmarkDecodeArgsAgain decodes the same text each time, as a call's
// stages after the first do (subjects, card, body, result card): validated
// once.
func BenchmarkDecodeArgsAgain(b *testing.B) {
	d := MustDefine(Spec[benchArgs]{Name: "read", Description: "Read a file."}, nop[benchArgs])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Execute(context.Background(), nil, benchRaw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareUnmarshal(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var a benchArgs
		if err := json.Unmarshal(benchRaw, &a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchemas100 is Schemas() for a scope that sees 100 tools.
func BenchmarkSchemas100(b *testing.B) {
	r := New()
	var defs []*Definition
	for i := range 100 {
		defs = append(defs, MustDefine(Spec[benchArgs]{Name: fmt.Sprintf("tool_%03d", i), Description: "A tool."},
			func(context.Context, Call, benchArgs) (Result, error) { return Result{}, nil }))
	}
	if err := r.SetGlobal(defs...); err != nil {
		b.Fatal(err)
	}
	if err := r.AddScoped("session", MustDefine(Spec[benchArgs]{Name: "local", Description: "A local tool."},
		func(context.Context, Call, benchArgs) (Result, error) { return Result{}, nil })); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := r.Schemas("session"); len(s) != 101 {
			b.Fatal(len(s))
		}
	}
}

// BenchmarkDecodeArgsWithoutChecker is the same work with santhosh-tekuri
// deciding acceptance too: the reason the allocation-free checker exists.
func BenchmarkDecodeArgsWithoutChecker(b *testing.B) {
	d := MustDefine(Spec[benchArgs]{Name: "read", Description: "Read a file."}, nop[benchArgs])
	v, err := CompileSchema(d.Parameters)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.parse(benchRaw); err != nil {
			b.Fatal(err)
		}
		var a benchArgs
		if err := json.Unmarshal(benchRaw, &a); err != nil {
			b.Fatal(err)
		}
	}
}
