package registry

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/presentation"
)

func raw(name string) *Definition {
	return &Definition{
		Name:        name,
		Description: "The " + name + " tool.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, Call, json.RawMessage) (Result, error) {
			return TextResult(name), nil
		},
	}
}

func names(defs []*Definition) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

func TestRegistrationSemanticChecks(t *testing.T) {
	mod := func(f func(d *Definition)) *Definition { d := raw("ok"); f(d); return d }
	tests := []struct {
		name string
		def  *Definition
		want string
	}{
		{"valid", raw("ok"), ""},
		{"valid timeout", mod(func(d *Definition) { d.TimeoutMs = 1500 }), ""},
		{"nil", nil, "nil definition"},
		{"empty name", mod(func(d *Definition) { d.Name = "" }), "name must match"},
		{"name with a dot", mod(func(d *Definition) { d.Name = "a.b" }), "name must match"},
		{"name too long", mod(func(d *Definition) { d.Name = strings.Repeat("a", 65) }), "name must match"},
		{"empty description", mod(func(d *Definition) { d.Description = " " }), "empty description"},
		{"negative timeout", mod(func(d *Definition) { d.TimeoutMs = -1 }), "TimeoutMs"},
		{"NaN timeout", mod(func(d *Definition) { d.TimeoutMs = math.NaN() }), "TimeoutMs"},
		{"infinite timeout", mod(func(d *Definition) { d.TimeoutMs = math.Inf(1) }), "TimeoutMs"},
		{"no body", mod(func(d *Definition) { d.Execute = nil }), "nil Execute"},
		{"parameters not an object", mod(func(d *Definition) { d.Parameters = json.RawMessage(`[]`) }), "Parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New().SetGlobal(tt.def)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var de *DefinitionError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a *DefinitionError with %q", err, tt.want)
			}
		})
	}
}

func TestUniquenessIsPerLayer(t *testing.T) {
	r := New()
	if err := r.SetGlobal(raw("a"), raw("a")); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate in the global layer: %v", err)
	}
	if err := r.SetGlobal(raw("a")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddScoped("s", raw("a")); err != nil { // shadows the global one
		t.Fatal(err)
	}
	if err := r.AddScoped("s", raw("a")); err == nil {
		t.Fatal("duplicate in a scope layer accepted")
	}
	if err := r.AddScoped("", raw("b")); err == nil {
		t.Fatal("empty scope accepted")
	}
	// A failed replacement leaves the previous layer live.
	if err := r.SetGlobal(raw("x"), raw("bad name")); err == nil {
		t.Fatal("bad name accepted")
	}
	if _, ok := r.Lookup("other", "a"); !ok {
		t.Fatal("failed SetGlobal replaced the layer")
	}
}

// TestSchemasIsAnAllowlist proves that nothing but name, title,
// description and parameters can reach a model request.
func TestSchemasIsAnAllowlist(t *testing.T) {
	var fields []string
	for f := range reflect.TypeFor[ToolSchema]().Fields() {
		fields = append(fields, f.Name)
	}
	if want := []string{"Name", "Title", "Description", "Parameters"}; !slices.Equal(fields, want) {
		t.Fatalf("ToolSchema has fields %v; adding one puts it on the wire: update this test only on purpose", fields)
	}
	d := MustDefine(Spec[readArgs]{
		Name: "read", Title: "Read", Description: "Read.", Kind: presentation.KindRead, TimeoutMs: 1234,
		PresentCall:   func(Call, readArgs) presentation.CallView { return presentation.CallView{Title: "SECRET"} },
		PresentResult: func(Call, readArgs, Result) *presentation.ResultView { return nil },
		Subjects:      func(Call, readArgs) []Subject { return nil },
		Preview: func(context.Context, Call, readArgs) (*presentation.ResultView, error) {
			return &presentation.ResultView{Card: &presentation.GenericCard{Title: "SECRET"}}, nil
		},
	}, nop[readArgs])
	r := New()
	if err := r.SetGlobal(d); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r.Schemas("s"))
	if err != nil {
		t.Fatal(err)
	}
	var wire []map[string]json.RawMessage
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire) != 1 {
		t.Fatalf("%s", b)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range wire[0] {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"description", "name", "parameters", "title"}; !slices.Equal(keys, want) {
		t.Errorf("wire keys %v, want %v", keys, want)
	}
	for _, leak := range []string{"1234", "SECRET", "kind", "timeout", "execute", "present", "subjects", "preview"} {
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(leak)) {
			t.Errorf("%q leaked into %s", leak, b)
		}
	}
}

func TestLayersAndRestrictions(t *testing.T) {
	tests := []struct {
		name         string
		restrictions []Restriction
		later        string // a global tool registered after the restrictions
		want         []string
	}{
		{"no restriction", nil, "d", []string{"a", "b", "c", "d", "local"}},
		{"deny-only admits later globals", []Restriction{DenyOnly("b")}, "d", []string{"a", "c", "d", "local"}},
		{"allow-list excludes later globals", []Restriction{AllowOnly("a", "b")}, "d", []string{"a", "b", "local"}},
		{"restrictions intersect", []Restriction{AllowOnly("a", "b", "c"), AllowOnly("b", "c"), DenyOnly("c")}, "d", []string{"b", "local"}},
		{"deny wins over allow", []Restriction{NewRestriction([]string{"a", "b"}, []string{"a"})}, "d", []string{"b", "local"}},
		{"nil allow is deny-only", []Restriction{NewRestriction(nil, []string{"a"})}, "d", []string{"b", "c", "d", "local"}},
		{"empty allow admits nothing global", []Restriction{NewRestriction([]string{}, nil)}, "d", []string{"local"}},
		{"restrictions never touch scope-local tools", []Restriction{AllowOnly("a"), DenyOnly("local")}, "d", []string{"a", "local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			if err := r.SetGlobal(raw("a"), raw("b"), raw("c")); err != nil {
				t.Fatal(err)
			}
			r.SetRestrictions(tt.restrictions...)
			if err := r.AddScoped("s", raw("local")); err != nil {
				t.Fatal(err)
			}
			if err := r.SetGlobal(raw("a"), raw("b"), raw("c"), raw(tt.later)); err != nil {
				t.Fatal(err)
			}
			if got := names(r.Visible("s")); !slices.Equal(got, tt.want) {
				t.Errorf("visible %v, want %v", got, tt.want)
			}
			for _, n := range []string{"a", "b", "c", "d", "local"} {
				_, ok := r.Lookup("s", n)
				if ok != slices.Contains(tt.want, n) {
					t.Errorf("Lookup(%q) = %v", n, ok)
				}
			}
			// Another scope sees the same globals, without "local".
			if got := names(r.Visible("other")); !slices.Equal(got, slices.DeleteFunc(slices.Clone(tt.want), func(s string) bool { return s == "local" })) {
				t.Errorf("other scope sees %v", got)
			}
		})
	}
}

func TestRestrictionCopiesItsNames(t *testing.T) {
	list := []string{"a"}
	rs := AllowOnly(list...)
	list[0] = "b"
	if !rs.Admits("a") || rs.Admits("b") {
		t.Fatal("restriction follows the caller's slice")
	}
	var zero Restriction
	if !zero.Admits("anything") {
		t.Fatal("zero restriction denies")
	}
}

func TestScopeLocalShadowsGlobal(t *testing.T) {
	r := New()
	g, l := raw("read"), raw("read")
	if err := r.SetGlobal(g); err != nil {
		t.Fatal(err)
	}
	if err := r.AddScoped("s", l); err != nil {
		t.Fatal(err)
	}
	if d, _ := r.Lookup("s", "read"); d != l {
		t.Error("scope-local tool does not shadow the global one")
	}
	if d, _ := r.Lookup("t", "read"); d != g {
		t.Error("another scope does not see the global tool")
	}
	r.RemoveScope("s")
	if d, _ := r.Lookup("s", "read"); d != g {
		t.Error("removed scope still overlays")
	}
}

func TestSwapScoped(t *testing.T) {
	r := New()
	task, a, b := raw("task"), raw("mcp__s__a"), raw("mcp__s__b")
	if err := r.AddScoped("s", task, a); err != nil {
		t.Fatal(err)
	}
	b2 := raw("mcp__s__b")
	if err := r.SwapScoped("s", []string{"mcp__s__a", "mcp__s__gone"}, b); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		for _, d := range r.Visible("s") {
			out = append(out, d.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"mcp__s__b", "task"}) {
		t.Errorf("after the swap: %v", got)
	}
	// A clash leaves the scope as it was.
	if err := r.SwapScoped("s", nil, b2); err == nil {
		t.Error("duplicate name accepted")
	}
	if d, _ := r.Lookup("s", "mcp__s__b"); d != b {
		t.Error("failed swap changed the scope")
	}
	if err := r.SwapScoped("", nil, b2); err == nil {
		t.Error("empty scope accepted")
	}
}

func TestChildScopes(t *testing.T) {
	r := New()
	if err := r.SetGlobal(raw("read"), raw("write"), raw("bash")); err != nil {
		t.Fatal(err)
	}
	r.SetRestrictions(DenyOnly("bash"))
	if err := r.AddScoped("session", raw("todo")); err != nil {
		t.Fatal(err)
	}
	if err := r.Restrict("session/agent", "session", AllowOnly("read", "todo", "bash")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddScoped("session/agent", raw("submit")); err != nil {
		t.Fatal(err)
	}
	// At most the parent's tools (bash stays denied globally), filtered,
	// plus the child's own.
	if got, want := names(r.Visible("session/agent")), []string{"read", "submit", "todo"}; !slices.Equal(got, want) {
		t.Errorf("child sees %v, want %v", got, want)
	}
	// A grandchild narrows further; restrictions intersect.
	if err := r.Restrict("session/agent/sub", "session/agent", DenyOnly("todo"), AllowOnly("todo", "submit")); err != nil {
		t.Fatal(err)
	}
	if got, want := names(r.Visible("session/agent/sub")), []string{"submit"}; !slices.Equal(got, want) {
		t.Errorf("grandchild sees %v, want %v", got, want)
	}
	// Parent changes flow down.
	if err := r.SetGlobal(raw("read")); err != nil {
		t.Fatal(err)
	}
	if got, want := names(r.Visible("session/agent")), []string{"read", "submit", "todo"}; !slices.Equal(got, want) {
		t.Errorf("after reload child sees %v, want %v", got, want)
	}
	if err := r.Restrict("session", "session/agent/sub"); err == nil {
		t.Error("cycle accepted")
	}
	if err := r.Restrict("x", "x"); err == nil {
		t.Error("self-parent accepted")
	}
	r.RemoveScope("session")
	if got, want := names(r.Visible("session/agent")), []string{"read", "submit"}; !slices.Equal(got, want) {
		t.Errorf("after parent removal child sees %v, want %v", got, want)
	}
}

// TestConcurrentReplacement runs readers against a writer that swaps the
// global layer and the restrictions: under -race, and every read must see
// one whole snapshot (either tool set, never a mix).
func TestConcurrentReplacement(t *testing.T) {
	r := New()
	setA := []*Definition{raw("a1"), raw("a2"), raw("a3")}
	setB := []*Definition{raw("b1"), raw("b2")}
	if err := r.SetGlobal(setA...); err != nil {
		t.Fatal(err)
	}
	stop := testsupport.Repeat(4, func(int) bool {
		got := names(r.Visible("s"))
		if !slices.Equal(got, []string{"a1", "a2", "a3"}) && !slices.Equal(got, []string{"b1", "b2"}) &&
			!slices.Equal(got, []string{"a1", "a3"}) && !slices.Equal(got, []string{"b1"}) {
			t.Errorf("torn snapshot: %v", got)
			return false
		}
		if s := r.Schemas("s"); len(s) < 1 || len(s) > 3 {
			t.Errorf("torn schemas: %v", s)
			return false
		}
		r.Lookup("s", "a1")
		return true
	})
	for i := range 200 {
		if i%2 == 0 {
			_ = r.SetGlobal(setB...)
		} else {
			_ = r.SetGlobal(setA...)
		}
		if i%3 == 0 {
			r.SetRestrictions(DenyOnly("a2", "b2"))
		} else {
			r.SetRestrictions()
		}
	}
	stop()
}
