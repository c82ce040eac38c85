package registry

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// FieldError is a mistake in an Args type, found at [Define]: it names the
// Go field (dotted from the Args struct) so the author can fix it without
// waiting for the first call.
type FieldError struct {
	Tool  string
	Field string // e.g. "Options.Limit"; empty for the Args type itself
	Err   error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("registry: tool %q: args type: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("registry: tool %q: field %s: %v", e.Tool, e.Field, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

var (
	// ErrUnsupportedType is wrapped by a FieldError for a Go type the DSL
	// cannot describe as JSON Schema.
	ErrUnsupportedType = errors.New("unsupported type")
	// ErrBadTag is wrapped by a FieldError for a malformed or misplaced tag.
	ErrBadTag = errors.New("bad tag")
)

// propertyNamePattern is what the model APIs accept as a property key.
const propertyNamePattern = `^[a-zA-Z0-9_.-]{1,64}$`

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

type deriver struct {
	tool   string
	errs   []error
	active map[reflect.Type]bool // struct types on the current path, to refuse recursion
}

func (d *deriver) fail(field string, err error) {
	d.errs = append(d.errs, &FieldError{Tool: d.tool, Field: field, Err: err})
}

// deriveSpec derives the root object schema of Args type t.
func deriveSpec(tool string, t reflect.Type) (*SchemaProp, error) {
	d := &deriver{tool: tool, active: map[reflect.Type]bool{}}
	if t.Kind() != reflect.Struct {
		d.fail("", fmt.Errorf("%w: %s: the Args type must be a struct", ErrUnsupportedType, t))
		return nil, errors.Join(d.errs...)
	}
	root := &SchemaProp{Type: TypeObject, Required: true}
	d.object(root, t, "")
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return root, nil
}

// object fills p's properties from struct type t. Embedded structs without
// a JSON name are promoted, as encoding/json does.
func (d *deriver) object(p *SchemaProp, t reflect.Type, path string) {
	if d.active[t] {
		d.fail(path, fmt.Errorf("%w: recursive type %s", ErrUnsupportedType, t))
		return
	}
	d.active[t] = true
	defer delete(d.active, t)
	p.Properties = SchemaSpec{}
	d.fields(p, t, path)
}

func (d *deriver) fields(p *SchemaProp, t reflect.Type, path string) {
	for i := range t.NumField() {
		f := t.Field(i)
		fpath := joinPath(path, f.Name)
		tag, _ := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
				if !f.IsExported() {
					d.fail(fpath, fmt.Errorf("%w: embedded pointer to unexported struct (encoding/json cannot allocate it)", ErrUnsupportedType))
					continue
				}
			}
			if et.Kind() == reflect.Struct {
				if implementsUnmarshaler(et) {
					d.fail(fpath, fmt.Errorf("%w: %s has custom JSON decoding", ErrUnsupportedType, et))
					continue
				}
				if d.active[et] {
					d.fail(fpath, fmt.Errorf("%w: recursive type %s", ErrUnsupportedType, et))
					continue
				}
				d.active[et] = true
				d.fields(p, et, path)
				delete(d.active, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !isName(name, "_.-") {
			d.fail(fpath, fmt.Errorf("%w: JSON name %q must match %s", ErrBadTag, name, propertyNamePattern))
			continue
		}
		if _, dup := p.Properties[name]; dup {
			d.fail(fpath, fmt.Errorf("%w: duplicate JSON name %q", ErrBadTag, name))
			continue
		}
		var omit, asString bool
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				omit = true
			case "string":
				asString = true
			}
		}
		if asString {
			d.fail(fpath, fmt.Errorf("%w: the json \",string\" option is not supported", ErrBadTag))
			continue
		}
		ft := f.Type
		isPtr := ft.Kind() == reflect.Pointer
		if isPtr {
			ft = ft.Elem()
			if ft.Kind() == reflect.Pointer {
				d.fail(fpath, fmt.Errorf("%w: pointer to pointer", ErrUnsupportedType))
				continue
			}
		}
		prop := SchemaProp{Required: !isPtr && !omit}
		if omit && !isPtr && ft.Kind() != reflect.Slice && ft.Kind() != reflect.Map {
			d.fail(fpath, fmt.Errorf("%w: an optional %s cannot tell absent from zero; use a pointer (*%s)", ErrBadTag, ft, ft))
			continue
		}
		if !d.value(&prop, ft, fpath) {
			continue
		}
		d.tags(&prop, f, ft, fpath)
		p.Properties[name] = prop
		p.order = append(p.order, name)
	}
}

// value fills the type-dependent part of p from Go type t. It reports
// whether t is supported.
func (d *deriver) value(p *SchemaProp, t reflect.Type, path string) bool {
	if implementsUnmarshaler(t) {
		d.fail(path, fmt.Errorf("%w: %s has custom JSON decoding, so its schema cannot be derived", ErrUnsupportedType, t))
		return false
	}
	switch t.Kind() {
	case reflect.String:
		p.Type = TypeString
	case reflect.Bool:
		p.Type = TypeBoolean
	case reflect.Float32, reflect.Float64:
		p.Type = TypeNumber
	case reflect.Int, reflect.Int64:
		p.Type = TypeInteger
	case reflect.Int8, reflect.Int16, reflect.Int32:
		p.Type = TypeInteger
		bits := t.Bits()
		lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)-1
		p.Minimum, p.Maximum = &lo, &hi
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Kind() == reflect.Uintptr {
			d.fail(path, fmt.Errorf("%w: %s", ErrUnsupportedType, t))
			return false
		}
		p.Type = TypeInteger
		lo := 0.0
		p.Minimum = &lo
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		p.Type = TypeInteger
		lo, hi := 0.0, math.Ldexp(1, t.Bits())-1
		p.Minimum, p.Maximum = &lo, &hi
	case reflect.Struct:
		p.Type = TypeObject
		d.object(p, t, path)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			d.fail(path, fmt.Errorf("%w: %s is base64 text in encoding/json; use string", ErrUnsupportedType, t))
			return false
		}
		p.Type = TypeArray
		var item SchemaProp
		et := t.Elem()
		if et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if !d.value(&item, et, path+"[]") {
			return false
		}
		item.Required = true
		p.Items = &item
		if t.Kind() == reflect.Array {
			// encoding/json zero-fills a short array and drops extra elements.
			n := t.Len()
			p.MinItems, p.MaxItems = &n, &n
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || implementsUnmarshaler(t.Key()) {
			d.fail(path, fmt.Errorf("%w: map keys must be strings, not %s", ErrUnsupportedType, t.Key()))
			return false
		}
		p.Type = TypeObject
		var v SchemaProp
		vt := t.Elem()
		if vt.Kind() == reflect.Pointer {
			vt = vt.Elem()
		}
		if !d.value(&v, vt, path+"[]") {
			return false
		}
		v.Required = true
		p.Values = &v
	default: // interfaces, channels, funcs, complex numbers, unsafe pointers
		d.fail(path, fmt.Errorf("%w: %s", ErrUnsupportedType, t))
		return false
	}
	return true
}

func implementsUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// tags applies desc, enum, default, min, max and pattern to p. t is the
// field's type with one pointer removed.
func (d *deriver) tags(p *SchemaProp, f reflect.StructField, t reflect.Type, path string) {
	p.Description = f.Tag.Get("desc")
	stringy := p.Type == TypeString
	target := p // enum and pattern apply to the elements of a []string
	if p.Type == TypeArray && p.Items != nil && p.Items.Type == TypeString {
		target = p.Items
	}
	if enum, ok := f.Tag.Lookup("enum"); ok {
		if target.Type != TypeString {
			d.fail(path, fmt.Errorf("%w: enum is for strings (or string slices), not %s", ErrBadTag, t))
		} else {
			seen := map[string]bool{}
			for v := range strings.SplitSeq(enum, "|") {
				if v == "" || seen[v] {
					d.fail(path, fmt.Errorf("%w: enum %q has an empty or repeated value", ErrBadTag, enum))
					break
				}
				seen[v] = true
				target.Enum = append(target.Enum, v)
			}
		}
	}
	if pat, ok := f.Tag.Lookup("pattern"); ok {
		if target.Type != TypeString {
			d.fail(path, fmt.Errorf("%w: pattern is for strings, not %s", ErrBadTag, t))
		} else if _, err := regexp.Compile(pat); err != nil {
			d.fail(path, fmt.Errorf("%w: pattern: %w", ErrBadTag, err))
		} else {
			target.Pattern = pat
		}
	}
	for _, key := range []string{"min", "max"} {
		raw, ok := f.Tag.Lookup(key)
		if !ok {
			continue
		}
		switch {
		case p.Type == TypeNumber || p.Type == TypeInteger:
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || (p.Type == TypeInteger && v != math.Trunc(v)) {
				d.fail(path, fmt.Errorf("%w: %s:%q is not a finite %s", ErrBadTag, key, raw, p.Type))
				continue
			}
			if key == "min" {
				p.Minimum = &v
			} else {
				p.Maximum = &v
			}
		case stringy || p.Type == TypeArray:
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 {
				d.fail(path, fmt.Errorf("%w: %s:%q is not a non-negative length", ErrBadTag, key, raw))
				continue
			}
			switch {
			case stringy && key == "min":
				p.MinLength = &n
			case stringy:
				p.MaxLength = &n
			case key == "min":
				p.MinItems = &n
			default:
				p.MaxItems = &n
			}
		default:
			d.fail(path, fmt.Errorf("%w: %s is for numbers, strings and arrays, not %s", ErrBadTag, key, t))
		}
	}
	if def, ok := f.Tag.Lookup("default"); ok {
		if p.Required {
			d.fail(path, fmt.Errorf("%w: a default on a required property is never used; make the field optional", ErrBadTag))
			return
		}
		raw := json.RawMessage(def)
		if stringy { // default:"utf-8" means the string utf-8
			raw, _ = json.Marshal(def)
		}
		dst := reflect.New(t)
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst.Interface()); err != nil || dec.More() {
			d.fail(path, fmt.Errorf("%w: default %q is not a %s", ErrBadTag, def, t))
			return
		}
		// The property's checker decides as its compiled schema does
		// (FuzzValidateArgs holds them together), without compiling one
		// at every start for each default of a built-in tool.
		var inst any
		if err := json.Unmarshal(raw, &inst); err != nil || !newChecker(p).valid(inst) {
			d.fail(path, fmt.Errorf("%w: default %q does not satisfy the property's own schema", ErrBadTag, def))
			return
		}
		p.Default = raw
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
