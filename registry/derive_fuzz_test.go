package registry

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// FuzzDerivedSchemasCompile holds Define's promise that every mistake in
// an Args type is found when the tool is defined: Define compiles the
// JSON Schema with santhosh-tekuri only on the first rejected call, so any
// struct the deriver accepts must give a schema that compiles. The fuzzer
// builds struct types field by field from a vocabulary of Go types and
// tag values, awkward ones included.
func FuzzDerivedSchemasCompile(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{3, 9, 9, 1, 2, 8, 8, 8, 12, 0, 4, 4})
	f.Add([]byte{1, 11, 7, 7, 7, 7, 2, 10, 5, 5, 5, 5})
	types := []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[*string](), reflect.TypeFor[int](), reflect.TypeFor[*int](),
		reflect.TypeFor[int8](), reflect.TypeFor[uint16](), reflect.TypeFor[float64](), reflect.TypeFor[*float32](),
		reflect.TypeFor[bool](), reflect.TypeFor[[]string](), reflect.TypeFor[[]int](), reflect.TypeFor[map[string]float64](),
		reflect.TypeFor[struct {
			A int `json:"a"`
		}](), reflect.TypeFor[[2]string](),
	}
	values := []string{"", "0", "1", "-1", "1.5", "1e400", "NaN", "-0", "0x10", "a", "(", "^a+$", `\d`, "text", `"x"`, "[1]", "{}", "null", "true", "\xff"}
	keys := []string{"min", "max", "pattern", "enum", "default", "desc"}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fields []reflect.StructField
		for i := 0; i+3 < len(data) && len(fields) < 6; i += 4 {
			typ := types[int(data[i])%len(types)]
			key := keys[int(data[i+1])%len(keys)]
			val := values[int(data[i+2])%len(values)]
			key2 := keys[int(data[i+3])%len(keys)]
			tag := fmt.Sprintf(`json:"f%d,omitempty" %s:%q %s:%q`, len(fields), key, val, key2, values[int(data[i+3])/len(keys)%len(values)])
			fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)), Type: typ, Tag: reflect.StructTag(tag)})
		}
		root, err := deriveSpec("fuzz", reflect.StructOf(fields))
		if err != nil {
			return // refused at definition: what the promise asks
		}
		var buf bytes.Buffer
		root.jsonSchema(&buf)
		if _, err := CompileSchema(buf.Bytes()); err != nil {
			t.Fatalf("accepted at definition, but the schema does not compile: %v\n%s", err, buf.Bytes())
		}
	})
}
