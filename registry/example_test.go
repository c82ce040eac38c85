package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// ReadArgs is the single source of truth of the read tool's parameters.
type ReadArgs struct {
	Path   string `json:"path" desc:"File to read"`
	Offset *int   `json:"offset,omitempty" desc:"First line, 1-based" min:"1"`
}

var Read = registry.MustDefine(registry.Spec[ReadArgs]{
	Name:        "read",
	Description: "Read a text file.",
	Kind:        presentation.KindRead,
}, func(ctx context.Context, call registry.Call, a ReadArgs) (registry.Result, error) {
	offset := 1 // the default when absent
	if a.Offset != nil {
		offset = *a.Offset
	}
	return registry.TextResult(fmt.Sprintf("reading %s from line %d", a.Path, offset)), nil
})

// Defining a tool: its arguments are a Go struct, from which the JSON
// Schema the model sees is derived and against which every call is checked
// before the body runs. The README shows this body (a test keeps the two
// the same).
func Example_tool() {
	type greetArgs struct {
		Name  string `json:"name" desc:"Who to greet"`
		Times *int   `json:"times,omitempty" desc:"How often" min:"1" max:"3"`
	}
	greet := registry.MustDefine(registry.Spec[greetArgs]{
		Name:        "greet",
		Description: "Greet someone.",
		Kind:        presentation.KindRead, // how the editor shows the call
	}, func(ctx context.Context, call registry.Call, a greetArgs) (registry.Result, error) {
		n := 1
		if a.Times != nil {
			n = *a.Times
		}
		return registry.TextResult(strings.TrimSpace(strings.Repeat("Hello, "+a.Name+"! ", n))), nil
	})
	reg := registry.New()
	if err := reg.SetGlobal(greet); err != nil { // every session sees it
		log.Fatal(err)
	}
	fmt.Println(string(greet.Parameters))
	res, err := greet.Execute(context.Background(), nil, json.RawMessage(`{"name":"Ada","times":2}`))
	fmt.Println(res.Content[0].Text, err)
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"Who to greet"},"times":{"type":"integer","description":"How often","minimum":1,"maximum":3}},"required":["name"],"additionalProperties":false}
	// Hello, Ada! Hello, Ada! <nil>
}

func ExampleDefine() {
	fmt.Println(string(Read.Parameters))

	r, _ := Read.Execute(context.Background(), nil, json.RawMessage(`{"path":"main.go","offset":10}`))
	fmt.Println(r.Content[0].Text)

	// Keys are case-sensitive, unknown keys and wrong types are refused,
	// and every problem is listed at once.
	_, err := Read.Execute(context.Background(), nil, json.RawMessage(`{"Path":"main.go","offset":"10"}`))
	fmt.Println(err)
	// Output:
	// {"type":"object","properties":{"path":{"type":"string","description":"File to read"},"offset":{"type":"integer","description":"First line, 1-based","minimum":1}},"required":["path"],"additionalProperties":false}
	// reading main.go from line 10
	// Invalid arguments for tool "read" (3 problems):
	// - arguments: missing required property "path"
	// - /Path: unknown property "Path"; property names are case-sensitive: use "path"
	// - /offset: expected integer, got string
	// Fix every problem listed and call the tool again.
}

func ExampleRegistry() {
	write := registry.MustDefine(registry.Spec[ReadArgs]{Name: "write", Description: "Write a file."}, nopBody)
	bash := registry.MustDefine(registry.Spec[ReadArgs]{Name: "bash", Description: "Run a command."}, nopBody)
	todo := registry.MustDefine(registry.Spec[ReadArgs]{Name: "todo", Description: "Track tasks."}, nopBody)

	r := registry.New()
	_ = r.SetGlobal(Read, write, bash)               // the deployment-global layer
	r.SetRestrictions(registry.DenyOnly("bash"))     // from configuration
	_ = r.AddScoped("session-1", todo)               // a session's own tool
	_ = r.Restrict("session-1/explore", "session-1", // a read-only subagent
		registry.AllowOnly("read", "todo"))

	for _, s := range r.Schemas("session-1") {
		fmt.Println("session:", s.Name)
	}
	for _, d := range r.Visible("session-1/explore") {
		fmt.Println("subagent:", d.Name)
	}
	_, ok := r.Lookup("session-1", "bash")
	fmt.Println("bash visible:", ok)
	// Output:
	// session: read
	// session: todo
	// session: write
	// subagent: read
	// subagent: todo
	// bash visible: false
}

func nopBody(context.Context, registry.Call, ReadArgs) (registry.Result, error) {
	return registry.Result{}, nil
}
