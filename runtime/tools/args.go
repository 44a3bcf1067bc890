package tools

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"flow/internal/text"
)

// A built-in tool's input is its argument struct (see the package doc). It
// has one field a property, in the order the required ones are listed:
//
//	Path  string `json:"path" desc:"file path relative to the workspace root"`
//	Start *int   `json:"start_line,omitempty" desc:"first line to return"`
//
// The json name is the property; omitempty makes it optional; desc is its
// description. A field is a string, a bool or an int (JSON integer), or a
// pointer to one when the tool must tell an absent optional argument from
// a zero one. Two more tags bound a value:
//
//	Task string `json:"task" min:"1" desc:"..."`                       // minLength 1
//	Wait *int   `json:"wait,omitempty" min:"0" max:"3600" desc:"..."` // minimum 0, maximum 3600
//
// min on a string is its least length in characters (Unicode code points,
// as JSON Schema counts them); min and max on an int are inclusive bounds.
// Anything else is a programming error and panics, which the schema golden
// tests catch.

// argField is one property of an argument struct.
type argField struct {
	index    int
	name     string
	typ      string // the JSON-Schema type
	desc     string
	optional bool
	pointer  bool
	min, max *int // the min and max tags, nil when absent
}

// argFields returns the properties of the argument struct t.
func argFields(t reflect.Type) []argField {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools: argument type %s is not a struct", t))
	}
	out := make([]argField, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			panic(fmt.Sprintf("tools: field %s.%s needs an exported field with a json name", t, f.Name))
		}
		af := argField{index: i, name: name, desc: f.Tag.Get("desc"), optional: opts == "omitempty"}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			if !af.optional {
				panic(fmt.Sprintf("tools: field %s.%s is a pointer but not omitempty", t, f.Name))
			}
			af.pointer, ft = true, ft.Elem()
		}
		switch ft.Kind() {
		case reflect.String:
			af.typ = "string"
		case reflect.Bool:
			af.typ = "boolean"
		case reflect.Int:
			af.typ = "integer"
		default:
			panic(fmt.Sprintf("tools: field %s.%s has unsupported type %s", t, f.Name, f.Type))
		}
		af.min, af.max = bound(t, f, "min"), bound(t, f, "max")
		if (af.min != nil && af.typ == "boolean") || (af.max != nil && af.typ != "integer") {
			panic(fmt.Sprintf("tools: field %s.%s: min applies to strings and ints, max to ints only", t, f.Name))
		}
		out = append(out, af)
	}
	return out
}

// bound returns the integer in the tag key of field f of t, or nil.
func bound(t reflect.Type, f reflect.StructField, key string) *int {
	text, ok := f.Tag.Lookup(key)
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < -intLimit || n > intLimit {
		panic(fmt.Sprintf("tools: field %s.%s has %s tag %q, want an integer within ±%d", t, f.Name, key, text, intLimit))
	}
	return &n
}

// schema returns the property schema of f. The bound keywords are written
// only when a tag asks for them, so that the model tools' schemas, which
// have none, stay what the models have always been shown.
func (f argField) schema() map[string]any {
	p := prop(f.typ, f.desc)
	if f.min != nil {
		if f.typ == "string" {
			p["minLength"] = *f.min
		} else {
			p["minimum"] = *f.min
		}
	}
	if f.max != nil {
		p["maximum"] = *f.max
	}
	return p
}

// paramsOf returns a fresh parameters schema for the argument struct t: a
// closed object whose required list follows the field order.
func paramsOf(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range argFields(t) {
		props[f.name] = f.schema()
		if !f.optional {
			required = append(required, f.name)
		}
	}
	return object(props, required...)
}

// intLimit bounds decoded integers to a range no line number reaches, so
// arithmetic on them never overflows.
const intLimit = 1 << 40

// parseArgs checks decoded arguments against the argument struct t and
// returns a new t filled from them: [ValidateArgs] against paramsOf(t) for
// keys and types, then [decodeInto] for the bounds.
func parseArgs(t reflect.Type, args map[string]any) (any, error) {
	if err := ValidateArgs(paramsOf(t), args); err != nil {
		return nil, err
	}
	return decodeInto(t, args)
}

// decodeInto returns a new value of the argument struct t filled from args,
// which must already have passed [ValidateArgs] against paramsOf(t). It
// enforces the min and max tags here, because ValidateArgs leaves minimum,
// maximum and minLength alone: the editor's schemas carry them too, and the
// editor checks its own. Any other error means the schema and the struct
// disagree: a bug, reported rather than hidden.
func decodeInto(t reflect.Type, args map[string]any) (any, error) {
	v := reflect.New(t).Elem()
	for _, f := range argFields(t) {
		raw, ok := args[f.name]
		if !ok {
			if !f.optional {
				return nil, fmt.Errorf("missing arguments: [%s]", f.name)
			}
			continue
		}
		var x reflect.Value
		switch f.typ {
		case "string":
			s, ok := raw.(string)
			if !ok {
				return nil, fmt.Errorf("%s must be a string, got %s", describe(f.name), kindOf(raw))
			}
			if f.min != nil && utf8.RuneCountInString(s) < *f.min {
				return nil, f.tooShort(s)
			}
			x = reflect.ValueOf(s)
		case "boolean":
			b, ok := raw.(bool)
			if !ok {
				return nil, fmt.Errorf("%s must be a boolean, got %s", describe(f.name), kindOf(raw))
			}
			x = reflect.ValueOf(b)
		case "integer":
			n, ok := number(raw)
			if !ok || !isInteger(raw) {
				return nil, fmt.Errorf("%s must be an integer, got %s", describe(f.name), kindOf(raw))
			}
			if err := f.inRange(n, raw); err != nil {
				return nil, err
			}
			x = reflect.ValueOf(int(max(min(n, intLimit), -intLimit)))
		}
		dst := v.Field(f.index)
		if f.pointer {
			p := reflect.New(x.Type())
			p.Elem().Set(x)
			x = p
		}
		dst.Set(x)
	}
	return v.Interface(), nil
}

// tooShort is the error for a string s shorter than f's min tag.
func (f argField) tooShort(s string) error {
	if *f.min == 1 {
		return fmt.Errorf("%s must not be empty", describe(f.name))
	}
	return fmt.Errorf("%s must be at least %d characters long, got %d", describe(f.name), *f.min, utf8.RuneCountInString(s))
}

// inRange checks the integer n (raw as decoded) against f's min and max
// tags. Comparing float64s is exact here: a bound is at most intLimit in
// magnitude (see bound), and float64 rounding, being monotonic, cannot move
// a larger integer across one.
func (f argField) inRange(n float64, raw any) error {
	switch {
	case f.min != nil && n < float64(*f.min):
		return fmt.Errorf("%s must be at least %d, got %s", describe(f.name), *f.min, text.Truncate(fmt.Sprint(raw), 40))
	case f.max != nil && n > float64(*f.max):
		return fmt.Errorf("%s must be at most %d, got %s", describe(f.name), *f.max, text.Truncate(fmt.Sprint(raw), 40))
	}
	return nil
}

// builtin makes the tool name whose arguments are the struct A.
func builtin[A any](name, desc string, run func(*Registry, context.Context, A) Result) tool {
	return tool{
		name: name,
		desc: desc,
		args: reflect.TypeFor[A](),
		run: func(r *Registry, ctx context.Context, args any) Result {
			return run(r, ctx, args.(A))
		},
	}
}

// params returns a fresh parameters schema of t.
func (t tool) params() map[string]any { return paramsOf(t.args) }

// parse decodes and validates the argument text of a call to t and returns
// its argument struct, or the message for the model when the text is not
// valid arguments.
func (t tool) parse(text string) (any, string) {
	args, err := DecodeArgs(text)
	if err != nil {
		return nil, fmt.Sprintf("Invalid tool arguments: %v; send a JSON object such as %s", err, usage(t))
	}
	v, err := parseArgs(t.args, args)
	if err != nil {
		return nil, fmt.Sprintf("Invalid arguments for %s: %v; expected %s", t.name, err, usage(t))
	}
	return v, ""
}

// given returns *p and whether the optional argument was given.
func given[T any](p *T) (T, bool) {
	if p == nil {
		var zero T
		return zero, false
	}
	return *p, true
}
