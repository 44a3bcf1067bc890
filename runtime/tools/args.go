package tools

import (
	"context"
	"fmt"
	"reflect"
	"strings"
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
// a zero one. Anything else is a programming error and panics, which the
// schema golden test catches.

// argField is one property of an argument struct.
type argField struct {
	index    int
	name     string
	typ      string // the JSON-Schema type
	desc     string
	optional bool
	pointer  bool
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
		out = append(out, af)
	}
	return out
}

// paramsOf returns a fresh parameters schema for the argument struct t: a
// closed object whose required list follows the field order.
func paramsOf(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range argFields(t) {
		props[f.name] = prop(f.typ, f.desc)
		if !f.optional {
			required = append(required, f.name)
		}
	}
	return object(props, required...)
}

// intLimit bounds decoded integers to a range no line number reaches, so
// arithmetic on them never overflows.
const intLimit = 1 << 40

// decodeInto returns a new value of the argument struct t filled from args,
// which must already have passed [ValidateArgs] against paramsOf(t). An
// error here means the two disagree: a bug, reported rather than hidden.
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
	err = ValidateArgs(t.params(), args)
	var v any
	if err == nil {
		v, err = decodeInto(t.args, args)
	}
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
