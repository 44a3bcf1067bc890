package tools

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"flow/internal/text"
)

// Limits of argument validation (doc/design.md §5, §16).
const (
	// MaxArgDepth is the deepest nesting of an argument value; the root is
	// depth 0, so a value at depth 17 is rejected.
	MaxArgDepth = 16
	// MaxArgNodes is the largest number of values (containers and scalars)
	// in one argument tree. It is checked before a container's children are
	// expanded: an array of 4095 scalars validates, one of 4096 does not.
	MaxArgNodes = 4096
)

// frame is one pending value of the iterative validation walk.
type frame struct {
	value  any
	schema map[string]any // nil accepts any value (children still count)
	depth  int
	path   string // "" for the root, else like `edits[2].path`
}

// ValidateArgs checks args against a JSON-Schema subset (doc/design.md §5): the
// keywords type (object, array, string, boolean, integer, number, null),
// enum, properties, required and items; every other keyword is ignored.
// Objects are always closed, booleans are never numbers, a number with a
// fraction or exponent (1.0) is never an integer, and non-finite numbers are
// rejected. Depth is at most [MaxArgDepth] and the tree at most
// [MaxArgNodes] values. The walk is iterative, so no input can overflow the
// stack. A malformed schema fails closed with an error.
//
// args is a decoded JSON value: json.Number keeps integers exact (see
// [DecodeArgs]); float64 is accepted too, in which case 1.0 cannot be told
// from 1 and counts as an integer.
func ValidateArgs(schema map[string]any, args any) error {
	if schema == nil {
		return errors.New("invalid tool schema: no schema")
	}
	stack := []frame{{value: args, schema: schema}}
	nodes := 1
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := checkValue(f); err != nil {
			return err
		}
		n := childCount(f.value)
		if n == 0 {
			continue
		}
		// Both limits are checked before the children are expanded.
		if f.depth+1 > MaxArgDepth {
			return fmt.Errorf("arguments exceed nesting depth %d", MaxArgDepth)
		}
		if nodes+n > MaxArgNodes {
			return fmt.Errorf("arguments exceed %d nodes", MaxArgNodes)
		}
		nodes += n
		children, err := childFrames(f)
		if err != nil {
			return err
		}
		// Push in reverse so the first key or element is checked first.
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, children[i])
		}
	}
	return nil
}

// childCount returns the number of children of a container value.
func childCount(v any) int {
	switch c := v.(type) {
	case map[string]any:
		return len(c)
	case []any:
		return len(c)
	}
	return 0
}

// checkValue applies type and enum of f.schema to f.value. For objects it
// also checks properties and required, so that a closed empty object with
// an unexpected key fails even though it has children to expand.
func checkValue(f frame) error {
	if f.schema == nil {
		return checkFinite(f)
	}
	if raw, ok := f.schema["type"]; ok {
		typ, ok := raw.(string)
		if !ok {
			return fmt.Errorf("invalid tool schema: type of %s is %T, want a string", describe(f.path), raw)
		}
		ok, err := hasType(f.value, typ)
		if err != nil {
			return fmt.Errorf("invalid tool schema: %s: %w", describe(f.path), err)
		}
		if !ok {
			return fmt.Errorf("%s must be %s, got %s", describe(f.path), article(typ), kindOf(f.value))
		}
	}
	if err := checkFinite(f); err != nil {
		return err
	}
	if raw, ok := f.schema["enum"]; ok {
		allowed, ok := anySlice(raw)
		if !ok {
			return fmt.Errorf("invalid tool schema: enum of %s is %T, want an array", describe(f.path), raw)
		}
		if !inEnum(f.value, allowed) {
			return fmt.Errorf("%s must be one of %s", describe(f.path), enumText(allowed))
		}
	}
	if obj, ok := f.value.(map[string]any); ok && closedObject(f.schema) {
		return checkKeys(f, obj)
	}
	return nil
}

// closedObject reports whether schema constrains an object's keys: it does
// when it declares type object or properties, with or without
// additionalProperties. A schema with neither (such as {}) accepts any value.
func closedObject(schema map[string]any) bool {
	_, hasProps := schema["properties"]
	return hasProps || schema["type"] == "object"
}

// checkFinite rejects numbers that do not fit a float64.
func checkFinite(f frame) error {
	if _, ok := number(f.value); !ok && isNumber(f.value) {
		return fmt.Errorf("%s is not a finite number", describe(f.path))
	}
	return nil
}

// checkKeys checks an object against its schema's properties and required
// keys: objects are always closed.
func checkKeys(f frame, v map[string]any) error {
	props, err := properties(f)
	if err != nil {
		return err
	}
	for k, raw := range props {
		if _, ok := raw.(map[string]any); !ok {
			return fmt.Errorf("invalid tool schema: property %q is %T, want an object", text.Truncate(k, 64), raw)
		}
	}
	required, err := stringList(f.schema["required"])
	if err != nil {
		return fmt.Errorf("invalid tool schema: required of %s: %w", describe(f.path), err)
	}
	var missing, unknown []string
	for _, k := range required {
		if _, ok := v[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range v {
		if _, ok := props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(missing) > 0 || len(unknown) > 0 {
		return keyError(f.path, missing, unknown, props)
	}
	return nil
}

// properties returns the properties of f.schema ({} when absent).
func properties(f frame) (map[string]any, error) {
	raw, ok := f.schema["properties"]
	if !ok {
		return map[string]any{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid tool schema: properties of %s is %T, want an object", describe(f.path), raw)
	}
	return m, nil
}

// childFrames returns the frames of f's children with their schemas; object
// children come sorted by key.
func childFrames(f frame) ([]frame, error) {
	switch v := f.value.(type) {
	case map[string]any:
		var props map[string]any
		if f.schema != nil {
			p, err := properties(f)
			if err != nil {
				return nil, err
			}
			props = p
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]frame, len(keys))
		for i, k := range keys {
			var sub map[string]any
			if raw, ok := props[k]; ok {
				m, ok := raw.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("invalid tool schema: property %q is %T, want an object", k, raw)
				}
				sub = m
			}
			p := k
			if f.path != "" {
				p = f.path + "." + k
			}
			out[i] = frame{value: v[k], schema: sub, depth: f.depth + 1, path: p}
		}
		return out, nil
	case []any:
		var items map[string]any
		if f.schema != nil {
			if raw, ok := f.schema["items"]; ok {
				m, ok := raw.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("invalid tool schema: items of %s is %T, want an object", describe(f.path), raw)
				}
				items = m
			}
		}
		out := make([]frame, len(v))
		for i, e := range v {
			out[i] = frame{value: e, schema: items, depth: f.depth + 1, path: f.path + "[" + strconv.Itoa(i) + "]"}
		}
		return out, nil
	}
	return nil, nil
}

// maxListedKeys bounds how many offending keys one message names.
const maxListedKeys = 20

// keyError formats missing and unknown keys, naming the accepted ones.
func keyError(at string, missing, unknown []string, props map[string]any) error {
	sort.Strings(missing)
	sort.Strings(unknown)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing arguments: "+keyList(missing))
	}
	if len(unknown) > 0 {
		accepted := make([]string, 0, len(props))
		for k := range props {
			accepted = append(accepted, k)
		}
		sort.Strings(accepted)
		parts = append(parts, "unknown arguments: "+keyList(unknown)+" (accepted: "+keyList(accepted)+")")
	}
	msg := strings.Join(parts, "; ")
	if at != "" {
		msg = "in " + describe(at) + ": " + msg
	}
	return errors.New(msg)
}

// keyList formats keys as [a, b], bounded in count and length.
func keyList(keys []string) string {
	shown := keys
	if len(shown) > maxListedKeys {
		shown = shown[:maxListedKeys]
	}
	out := make([]string, len(shown))
	for i, k := range shown {
		out[i] = text.Truncate(k, 64)
	}
	s := "[" + strings.Join(out, ", ")
	if len(keys) > len(shown) {
		s += fmt.Sprintf(", ... %d more", len(keys)-len(shown))
	}
	return s + "]"
}
