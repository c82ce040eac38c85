package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// toolNamePattern is what the model APIs accept as a tool name.
const toolNamePattern = `^[a-zA-Z0-9_-]{1,64}$`

// isName reports whether s is 1 to 64 ASCII letters, digits or bytes of
// punct: toolNamePattern and propertyNamePattern without compiling them
// (a {1,64} repetition compiles to 64 copies, a millisecond of start-up).
func isName(s, punct string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(punct, c) >= 0) {
			return false
		}
	}
	return true
}

// DefinitionError is a definition the registry refuses: registration is a
// trusted same-process contract, so only semantic requirements are checked.
type DefinitionError struct {
	Tool   string
	Reason string
}

func (e *DefinitionError) Error() string {
	return fmt.Sprintf("registry: tool %q: %s", e.Tool, e.Reason)
}

// checkDefinition validates the semantic requirements of one definition.
func checkDefinition(d *Definition) error {
	if d == nil {
		return &DefinitionError{Reason: "nil definition"}
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, &DefinitionError{Tool: d.Name, Reason: fmt.Sprintf(format, args...)})
	}
	if !isName(d.Name, "_-") {
		bad("name must match %s", toolNamePattern)
	}
	if strings.TrimSpace(d.Description) == "" {
		bad("empty description")
	}
	if d.TimeoutMs != 0 && (!(d.TimeoutMs > 0) || math.IsInf(d.TimeoutMs, 0)) {
		bad("TimeoutMs %v must be positive and finite", d.TimeoutMs)
	}
	if d.Execute == nil {
		bad("nil Execute")
	}
	if !isObjectOrNull(d.Parameters) {
		// Decoded only to say what is wrong: json.Valid is the check, a
		// fifth of every start's tools.Builtin when it was a decode.
		var obj map[string]json.RawMessage
		err := json.Unmarshal(d.Parameters, &obj)
		if err == nil {
			err = errors.New("not an object")
		}
		bad("Parameters must be a JSON object schema: %v", err)
	}
	return errors.Join(errs...)
}

// isObjectOrNull reports whether b is one valid JSON value that is an
// object or null: what json.Unmarshal into a map accepts.
func isObjectOrNull(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	b = bytes.TrimLeft(b, " \t\r\n")
	return b[0] == '{' || b[0] == 'n'
}

// Restriction filters the deployment-global layer. It is compiled from
// name lists into private sets, so changing the caller's slices later
// changes nothing. The zero Restriction admits every tool.
//
// An allow-list admits only the tools it names, so a global tool
// registered later stays out until it is listed. A deny-only restriction
// admits every tool it does not name, including later ones.
type Restriction struct {
	allow map[string]struct{} // nil: no allow-list
	deny  map[string]struct{}
}

// AllowOnly is an allow-list restriction.
func AllowOnly(names ...string) Restriction {
	return Restriction{allow: set(names)}
}

// DenyOnly is a deny-only restriction.
func DenyOnly(names ...string) Restriction {
	return Restriction{deny: set(names)}
}

// NewRestriction compiles a restriction from configuration: allow == nil
// means "no allow-list" (deny-only), a non-nil empty allow admits nothing.
// A name on both lists is denied.
func NewRestriction(allow, deny []string) Restriction {
	r := Restriction{deny: set(deny)}
	if allow != nil {
		r.allow = set(allow)
	}
	return r
}

func set(names []string) map[string]struct{} {
	s := make(map[string]struct{}, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

// Admits reports whether the restriction lets tool name through.
func (r Restriction) Admits(name string) bool {
	if _, denied := r.deny[name]; denied {
		return false
	}
	if r.allow != nil {
		_, ok := r.allow[name]
		return ok
	}
	return true
}

// Registry resolves tool names per scope. Its layers, from the bottom:
//
//  1. the deployment-global layer ([Registry.SetGlobal]), replaceable live
//     for configuration reloads;
//  2. filtered by the global restrictions ([Registry.SetRestrictions]),
//     which intersect;
//  3. for a child scope ([Registry.Restrict], a subagent), the parent
//     scope's visible tools filtered by the child's restriction;
//  4. overlaid by the scope's own tools ([Registry.AddScoped]), which no
//     restriction touches and which shadow a lower tool of the same name.
//
// Reads (Lookup, Visible, Schemas) load one immutable snapshot with a
// single atomic load and take no lock; writers serialize, build a new
// snapshot and publish it atomically, so a reader sees either the old
// state or the new one, never a mix. A scope nobody registered sees the
// restricted global layer.
type Registry struct {
	mu   sync.Mutex // serializes writers
	snap atomic.Pointer[snapshot]
}

type snapshot struct {
	global       map[string]*Definition
	restrictions []Restriction
	scopes       map[string]*scopeState
	// resolved holds the visible tools per registered scope, and "" → the
	// restricted global layer for every other scope.
	resolved map[string]*resolved
}

type scopeState struct {
	parent     string
	restricted bool // a child scope: inherits its parent's tools through restriction
	restrict   Restriction
	local      map[string]*Definition
}

type resolved struct {
	byName  map[string]*Definition
	sorted  []*Definition
	schemas []ToolSchema
}

// New returns an empty registry.
func New() *Registry {
	r := &Registry{}
	r.snap.Store(build(nil, nil, nil))
	return r
}

// SetGlobal replaces the deployment-global layer with defs, atomically. On
// error the previous layer stays.
func (r *Registry) SetGlobal(defs ...*Definition) error {
	layer, err := layerOf(defs)
	if err != nil {
		return fmt.Errorf("registry: global layer: %w", err)
	}
	r.update(func(s *snapshot) { s.global = layer })
	return nil
}

// SetRestrictions replaces the restrictions of the global layer. Several
// restrictions intersect: a tool is visible if every one admits it.
func (r *Registry) SetRestrictions(rs ...Restriction) {
	rs = slices.Clone(rs)
	r.update(func(s *snapshot) { s.restrictions = rs })
}

// Admits reports whether the global layer's restrictions admit a tool
// called name. Scope-local tools escape the restrictions; whoever adds one
// that the settings should be able to switch off (a session's skill tool,
// say) asks here first.
func (r *Registry) Admits(name string) bool { return admitted(r.snap.Load().restrictions, name) }

// AddScoped adds scope-local tools to scope (a session, usually). Names
// must be unique within the scope's own layer; a scope-local tool shadows a
// global one of the same name. Restrictions do not apply to them.
func (r *Registry) AddScoped(scope string, defs ...*Definition) error {
	return r.SwapScoped(scope, nil, defs...)
}

// SwapScoped replaces some of scope's local tools in one step: the tools
// named in remove go (names it lacks are ignored) and add come in, so a
// call sees either the old set or the new one (an MCP server whose tool
// list changed). On error (a name clash) the scope is unchanged.
func (r *Registry) SwapScoped(scope string, remove []string, add ...*Definition) error {
	if scope == "" {
		return errors.New("registry: empty scope")
	}
	var err error
	r.update(func(s *snapshot) {
		st := cloneScope(s.scopes[scope])
		var kept []*Definition
		for name, d := range st.local {
			if !slices.Contains(remove, name) {
				kept = append(kept, d)
			}
		}
		var layer map[string]*Definition
		if layer, err = layerOf(append(kept, add...)); err != nil {
			err = fmt.Errorf("registry: scope %q: %w", scope, err)
			return
		}
		st.local = layer
		s.scopes[scope] = st
	})
	return err
}

// Restrict makes scope a child of parent: it sees at most what parent
// sees (the parent's own scope-local tools included), filtered by rs (which
// intersect), plus its own scope-local tools. A subagent's tool list is
// this. Restricting again replaces the previous parent and restriction.
func (r *Registry) Restrict(scope, parent string, rs ...Restriction) error {
	if scope == "" || scope == parent {
		return fmt.Errorf("registry: Restrict: bad scope %q (parent %q)", scope, parent)
	}
	var err error
	r.update(func(s *snapshot) {
		for p := parent; p != ""; {
			if p == scope {
				err = fmt.Errorf("registry: Restrict: %q under %q makes a cycle", scope, parent)
				return
			}
			ps, ok := s.scopes[p]
			if !ok || !ps.restricted {
				break
			}
			p = ps.parent
		}
		st := cloneScope(s.scopes[scope])
		st.parent, st.restricted, st.restrict = parent, true, intersect(rs)
		s.scopes[scope] = st
	})
	return err
}

// RemoveScope forgets a scope's tools and restriction (at session end).
// Its children keep their restriction, which then applies to the
// restricted global layer, as for a child of a scope never registered.
func (r *Registry) RemoveScope(scope string) {
	r.update(func(s *snapshot) { delete(s.scopes, scope) })
}

// Lookup resolves name as scope sees it.
func (r *Registry) Lookup(scope, name string) (*Definition, bool) {
	d, ok := r.snap.Load().resolve(scope).byName[name]
	return d, ok
}

// Visible returns the tools scope sees, sorted by name. The slice is the
// caller's; the definitions are shared and read-only.
func (r *Registry) Visible(scope string) []*Definition {
	return slices.Clone(r.snap.Load().resolve(scope).sorted)
}

// Schemas returns the model-facing projection of the tools scope sees,
// sorted by name. Only name, title, description and parameters reach it
// (an explicit allowlist); callbacks, presentation, kind and timeouts never
// do. Parameters bytes are shared: do not modify them.
func (r *Registry) Schemas(scope string) []ToolSchema {
	return slices.Clone(r.snap.Load().resolve(scope).schemas)
}

// SchemaOf is the model-facing projection of one definition, by explicit
// allowlist of fields.
func SchemaOf(d *Definition) ToolSchema {
	return ToolSchema{
		Name:        d.Name,
		Title:       d.Title,
		Description: d.Description,
		Parameters:  d.Parameters,
	}
}

func (s *snapshot) resolve(scope string) *resolved {
	if res, ok := s.resolved[scope]; ok && scope != "" {
		return res
	}
	return s.resolved[""]
}

func (r *Registry) update(change func(*snapshot)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	next := &snapshot{
		global:       old.global,
		restrictions: old.restrictions,
		scopes:       maps.Clone(old.scopes),
	}
	if next.scopes == nil {
		next.scopes = map[string]*scopeState{}
	}
	change(next)
	r.snap.Store(build(next.global, next.restrictions, next.scopes))
}

// build resolves every registered scope once, so that reads are map hits.
func build(global map[string]*Definition, rs []Restriction, scopes map[string]*scopeState) *snapshot {
	s := &snapshot{global: global, restrictions: rs, scopes: scopes, resolved: map[string]*resolved{}}
	base := map[string]*Definition{}
	for name, d := range global {
		if admitted(rs, name) {
			base[name] = d
		}
	}
	s.resolved[""] = finish(base)
	var visit func(scope string, depth int) map[string]*Definition
	visit = func(scope string, depth int) map[string]*Definition {
		if res, ok := s.resolved[scope]; ok && scope != "" {
			return res.byName
		}
		st, ok := scopes[scope]
		if !ok || depth > len(scopes) {
			return base
		}
		var inherited map[string]*Definition
		if st.restricted {
			inherited = map[string]*Definition{}
			for name, d := range visit(st.parent, depth+1) {
				if st.restrict.Admits(name) {
					inherited[name] = d
				}
			}
		} else {
			inherited = maps.Clone(base)
		}
		maps.Copy(inherited, st.local)
		s.resolved[scope] = finish(inherited)
		return inherited
	}
	for scope := range scopes {
		visit(scope, 0)
	}
	return s
}

func finish(byName map[string]*Definition) *resolved {
	res := &resolved{byName: byName}
	res.sorted = slices.SortedFunc(maps.Values(byName), func(a, b *Definition) int {
		return strings.Compare(a.Name, b.Name)
	})
	res.schemas = make([]ToolSchema, len(res.sorted))
	for i, d := range res.sorted {
		res.schemas[i] = SchemaOf(d)
	}
	return res
}

func admitted(rs []Restriction, name string) bool {
	for _, r := range rs {
		if !r.Admits(name) {
			return false
		}
	}
	return true
}

// intersect folds several restrictions into one.
func intersect(rs []Restriction) Restriction {
	var out Restriction
	for _, r := range rs {
		if r.deny != nil {
			if out.deny == nil {
				out.deny = map[string]struct{}{}
			}
			maps.Copy(out.deny, r.deny)
		}
		if r.allow != nil {
			if out.allow == nil {
				out.allow = maps.Clone(r.allow)
				continue
			}
			for name := range out.allow {
				if _, ok := r.allow[name]; !ok {
					delete(out.allow, name)
				}
			}
		}
	}
	return out
}

func cloneScope(st *scopeState) *scopeState {
	if st == nil {
		return &scopeState{local: map[string]*Definition{}}
	}
	c := *st
	c.local = maps.Clone(st.local)
	return &c
}

// layerOf checks defs and indexes them by name, refusing duplicates.
func layerOf(defs []*Definition) (map[string]*Definition, error) {
	layer := make(map[string]*Definition, len(defs))
	var errs []error
	for _, d := range defs {
		if err := checkDefinition(d); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := layer[d.Name]; dup {
			errs = append(errs, &DefinitionError{Tool: d.Name, Reason: "registered twice in one layer"})
			continue
		}
		layer[d.Name] = d
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return layer, nil
}
