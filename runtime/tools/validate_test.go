package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// nest wraps a scalar in n arrays, so the scalar sits at depth n.
func nest(n int) any {
	var v any = "x"
	for range n {
		v = []any{v}
	}
	return v
}

// wrap wraps v in n arrays.
func wrap(v any, n int) any {
	for range n {
		v = []any{v}
	}
	return v
}

// ints returns an array of n integers as decoded by DecodeArgs.
func ints(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = json.Number("7")
	}
	return out
}

func TestValidateArgs(t *testing.T) {
	intArray := map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}
	readSchema := fileReadParams()
	numbers := object(map[string]any{
		"i": prop("integer", ""),
		"n": prop("number", ""),
		"b": prop("boolean", ""),
		"e": map[string]any{"type": "string", "enum": []any{"a", "b"}},
		"z": map[string]any{"type": "null"},
	})
	nested := object(map[string]any{
		"edits": map[string]any{"type": "array", "items": object(map[string]any{"path": prop("string", "")}, "path")},
		"free":  map[string]any{},
	})
	tests := []struct {
		name    string
		schema  map[string]any
		args    any
		wantErr string // "" means valid
	}{
		{"depth 16 ok", map[string]any{}, nest(16), ""},
		{"depth 17 fails", map[string]any{}, nest(17), "nesting depth 16"},
		{"depth 8192 fails", map[string]any{}, nest(8192), "nesting depth 16"},
		{"empty container at depth 16 ok", map[string]any{}, wrap([]any{}, 16), ""},
		{"empty container at depth 17 fails", map[string]any{}, wrap([]any{[]any{}}, 16), "nesting depth 16"},
		{"4095 nodes ok", intArray, ints(4095), ""},
		{"4096 nodes fails", intArray, ints(4096), "exceed 4096 nodes"},
		{"bool is not an integer", intArray, []any{true}, `argument "[0]" must be an integer, got a boolean`},
		{"1.0 is not an integer", numbers, map[string]any{"i": json.Number("1.0")}, `argument "i" must be an integer, got the number 1.0`},
		{"1e2 is not an integer", numbers, map[string]any{"i": json.Number("1e2")}, "must be an integer"},
		{"huge integer out of range", numbers, map[string]any{"i": json.Number("99999999999999999999")}, "must be an integer"},
		{"integer ok", numbers, map[string]any{"i": json.Number("-3")}, ""},
		{"1.0 is a number", numbers, map[string]any{"n": json.Number("1.0")}, ""},
		{"integer is a number", numbers, map[string]any{"n": json.Number("2")}, ""},
		{"bool is not a number", numbers, map[string]any{"n": true}, `argument "n" must be a number, got a boolean`},
		{"string is not a number", numbers, map[string]any{"n": "1"}, "got a string"},
		{"non-finite number", numbers, map[string]any{"n": json.Number("1e400")}, `argument "n" is not a finite number`},
		{"float64 integral is an integer", numbers, map[string]any{"i": float64(3)}, ""},
		{"float64 fraction is not an integer", numbers, map[string]any{"i": 3.5}, "must be an integer"},
		{"boolean ok", numbers, map[string]any{"b": false}, ""},
		{"null ok", numbers, map[string]any{"z": nil}, ""},
		{"null wanted", numbers, map[string]any{"z": "x"}, "must be null"},
		{"enum ok", numbers, map[string]any{"e": "b"}, ""},
		{"enum miss", numbers, map[string]any{"e": "c"}, `argument "e" must be one of ["a","b"]`},
		{"missing and unknown", readSchema, map[string]any{"bogus": "x"},
			"missing arguments: [path]; unknown arguments: [bogus] (accepted: [end_line, path, start_line])"},
		{"unknown without additionalProperties", map[string]any{"type": "object", "properties": map[string]any{}},
			map[string]any{"x": json.Number("1")}, "unknown arguments: [x]"},
		{"empty object schema is closed", map[string]any{"type": "object"}, map[string]any{"x": "y"}, "unknown arguments: [x]"},
		{"missing only", readSchema, map[string]any{}, "missing arguments: [path]"},
		{"wrong type", readSchema, map[string]any{"path": json.Number("5")}, `argument "path" must be a string, got an integer`},
		{"root must be object", readSchema, []any{}, "arguments must be an object, got an array"},
		{"nested element path", nested, map[string]any{"edits": []any{
			map[string]any{"path": "a"}, map[string]any{"path": false},
		}}, `argument "edits[1].path" must be a string, got a boolean`},
		{"nested missing", nested, map[string]any{"edits": []any{map[string]any{}}}, `in argument "edits[0]": missing arguments: [path]`},
		{"free property accepts any object", nested, map[string]any{"free": map[string]any{"k": []any{"v"}}}, ""},
		{"many unknown keys are bounded", map[string]any{"type": "object"}, manyKeys(100), "... 80 more]"},
		{"bad schema: type list", map[string]any{"type": []any{"string", "null"}}, "x", "invalid tool schema"},
		{"bad schema: unknown type", map[string]any{"type": "str"}, "x", `invalid tool schema: arguments: unknown type "str"`},
		{"bad schema: properties not object", map[string]any{"type": "object", "properties": []any{}}, map[string]any{}, "invalid tool schema"},
		{"bad schema: property not object", object(map[string]any{"a": "string"}), map[string]any{}, `invalid tool schema: property "a"`},
		{"bad schema: required not strings", map[string]any{"type": "object", "required": []any{json.Number("1")}}, map[string]any{}, "invalid tool schema"},
		{"bad schema: enum not array", map[string]any{"enum": "a"}, "a", "invalid tool schema"},
		{"bad schema: items not object", map[string]any{"type": "array", "items": true}, []any{json.Number("1")}, "invalid tool schema"},
		{"nil schema fails closed", nil, map[string]any{}, "invalid tool schema"},
		{"unsupported Go value", map[string]any{"type": "string"}, struct{}{}, "must be a string, got an unsupported value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateArgs(tc.schema, tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateArgs() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ValidateArgs() = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[strings.Repeat("k", i+1)] = true
	}
	return m
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    string // JSON of the decoded object when valid
		wantErr string
	}{
		{"empty means object", "", "{}", ""},
		{"spaces mean object", " \n\t", "{}", ""},
		{"null means object", "null", "{}", ""},
		{"object", `{"a":1.0,"b":[true]}`, `{"a":1.0,"b":[true]}`, ""},
		{"integers stay exact", `{"a":12345678901234567}`, `{"a":12345678901234567}`, ""},
		{"invalid JSON", `{"a":}`, "", "invalid character '}'"},
		{"truncated JSON", `{"a":"b`, "", "unexpected end of JSON input"},
		{"array root", `[1,2]`, "", "expected a JSON object, got an array"},
		{"string root", `"x"`, "", "expected a JSON object, got a string"},
		{"trailing data", `{} {}`, "", "unexpected data after the JSON object"},
		{"NaN", `{"a":NaN}`, "", "invalid character 'N'"},
		{"deep nesting rejected before decoding", `{"a":` + strings.Repeat("[", 8192) + strings.Repeat("]", 8192) + `}`, "", "nesting depth 16"},
		{"brackets inside strings do not count", `{"a":"` + strings.Repeat("[", 100) + `\"` + `"}`, `{"a":"` + strings.Repeat("[", 100) + `\""}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeArgs(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecodeArgs(%.40q) = %v, %v; want error containing %q", tc.text, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%.40q) = %v", tc.text, err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Fatalf("DecodeArgs(%.40q) = %s, want %s", tc.text, b, tc.want)
			}
		})
	}
}

// TestValidateDecodedDepth checks the depth rule end to end on text: 16
// levels below the root object pass, 17 fail.
func TestValidateDecodedDepth(t *testing.T) {
	schema := object(map[string]any{"a": map[string]any{}})
	for _, tc := range []struct {
		arrays int
		ok     bool
	}{{15, true}, {16, false}, {40, false}} {
		// The root object is depth 0, "a" depth 1, so a scalar inside n
		// arrays under "a" is at depth n+1.
		text := `{"a":` + strings.Repeat("[", tc.arrays) + "1" + strings.Repeat("]", tc.arrays) + "}"
		args, err := DecodeArgs(text)
		if err == nil {
			err = ValidateArgs(schema, args)
		}
		if (err == nil) != tc.ok {
			t.Errorf("validate %d arrays = %v, want ok %v", tc.arrays, err, tc.ok)
		}
	}
}
