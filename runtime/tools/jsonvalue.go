package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"flow/internal/text"
)

// hasType reports whether v is a JSON value of schema type typ.
func hasType(v any, typ string) (bool, error) {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok, nil
	case "array":
		_, ok := v.([]any)
		return ok, nil
	case "string":
		_, ok := v.(string)
		return ok, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "null":
		return v == nil, nil
	case "number":
		return isNumber(v), nil
	case "integer":
		return isInteger(v), nil
	}
	return false, fmt.Errorf("unknown type %q", typ)
}

// isNumber reports whether v is a JSON number (finite or not).
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

// number returns v as a finite float64.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return 0, false
		}
		f = x
	case float64:
		f = n
	case float32:
		f = float64(n)
	default:
		if !isNumber(v) {
			return 0, false
		}
		return float64(reflect.ValueOf(v).Convert(reflect.TypeFor[float64]()).Float()), true
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// isInteger reports whether v is an integer that fits an int64. A
// json.Number must be written without fraction or exponent.
func isInteger(v any) bool {
	switch n := v.(type) {
	case json.Number:
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	case float64:
		return n == math.Trunc(n) && math.Abs(n) <= 1<<53
	case float32:
		return float64(n) == math.Trunc(float64(n)) && math.Abs(float64(n)) <= 1<<24
	case int, int8, int16, int32, int64, uint8, uint16, uint32:
		return true
	case uint:
		return uint64(n) <= math.MaxInt64
	case uint64:
		return n <= math.MaxInt64
	}
	return false
}

// inEnum reports whether v equals one of allowed, comparing numbers by value
// and other values by their JSON encoding.
func inEnum(v any, allowed []any) bool {
	for _, a := range allowed {
		if isNumber(v) && isNumber(a) {
			x, ok1 := number(v)
			y, ok2 := number(a)
			if ok1 && ok2 && x == y {
				return true
			}
			continue
		}
		if reflect.DeepEqual(v, a) {
			return true
		}
		vb, err1 := json.Marshal(v)
		ab, err2 := json.Marshal(a)
		if err1 == nil && err2 == nil && bytes.Equal(vb, ab) {
			return true
		}
	}
	return false
}

// enumText formats enum values for a message.
func enumText(allowed []any) string {
	b, err := json.Marshal(allowed)
	if err != nil {
		return fmt.Sprint(allowed)
	}
	return text.Truncate(string(b), 300)
}

// anySlice converts []any or []string to []any.
func anySlice(raw any) ([]any, bool) {
	switch s := raw.(type) {
	case []any:
		return s, true
	case []string:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return out, true
	}
	return nil, false
}

// stringList converts a required list ([]string or []any of strings).
func stringList(raw any) ([]string, error) {
	switch s := raw.(type) {
	case nil:
		return nil, nil
	case []string:
		return s, nil
	case []any:
		out := make([]string, len(s))
		for i, x := range s {
			str, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("entry %d is %T, want a string", i, x)
			}
			out[i] = str
		}
		return out, nil
	}
	return nil, fmt.Errorf("got %T, want an array of strings", raw)
}

// kindOf names the JSON type of v for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	if isInteger(v) {
		return "an integer"
	}
	if isNumber(v) {
		if n, ok := v.(json.Number); ok {
			return "the number " + text.Truncate(string(n), 40)
		}
		return "a number"
	}
	return fmt.Sprintf("an unsupported value (%T)", v)
}

// article prefixes a schema type name for messages ("an integer").
func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

// describe names an argument path for messages.
func describe(path string) string {
	if path == "" {
		return "arguments"
	}
	return "argument " + strconv.Quote(text.Truncate(path, 80))
}
