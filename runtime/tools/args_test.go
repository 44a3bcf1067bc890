package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fileReadParams is file_read's parameters schema, for the validator's
// tests.
func fileReadParams() map[string]any { return paramsOf(reflect.TypeFor[fileReadArgs]()) }

// sampleArgs has one field of each supported shape.
type sampleArgs struct {
	Name  string  `json:"name" desc:"a required string"`
	Count int     `json:"count" desc:"a required integer"`
	Dry   bool    `json:"dry,omitempty" desc:"an optional boolean"`
	From  *int    `json:"from,omitempty" desc:"an optional integer whose absence matters"`
	Dir   *string `json:"dir,omitempty" desc:"an optional string whose absence matters"`
	Force *bool   `json:"force,omitempty"`
}

func TestParamsOf(t *testing.T) {
	got := paramsOf(reflect.TypeFor[sampleArgs]())
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "description": "a required string"},
			"count": map[string]any{"type": "integer", "description": "a required integer"},
			"dry":   map[string]any{"type": "boolean", "description": "an optional boolean"},
			"from":  map[string]any{"type": "integer", "description": "an optional integer whose absence matters"},
			"dir":   map[string]any{"type": "string", "description": "an optional string whose absence matters"},
			"force": map[string]any{"type": "boolean", "description": ""},
		},
		"required":             []string{"name", "count"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paramsOf(sampleArgs) mismatch (-want +got):\n%s", diff)
	}
	// A tool without required arguments still lists none, as [].
	if req := paramsOf(reflect.TypeFor[flowCheckArgs]())["required"]; !reflect.DeepEqual(req, []string{}) {
		t.Errorf("paramsOf(flowCheckArgs)[required] = %#v, want []string{}", req)
	}
}

// boundedArgs has each kind of bound tag.
type boundedArgs struct {
	Task  string `json:"task" min:"1" desc:"not empty"`
	Label string `json:"label,omitempty" min:"3" desc:"at least three characters"`
	Wait  *int   `json:"wait,omitempty" min:"0" max:"60" desc:"from 0 to 60"`
	Depth int    `json:"depth,omitempty" min:"-2" desc:"from -2"`
}

func TestSchemaBounds(t *testing.T) {
	got := Schema[boundedArgs]()
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"task":  map[string]any{"type": "string", "description": "not empty", "minLength": 1},
			"label": map[string]any{"type": "string", "description": "at least three characters", "minLength": 3},
			"wait":  map[string]any{"type": "integer", "description": "from 0 to 60", "minimum": 0, "maximum": 60},
			"depth": map[string]any{"type": "integer", "description": "from -2", "minimum": -2},
		},
		"required":             []string{"task"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema[boundedArgs] mismatch (-want +got):\n%s", diff)
	}
	// Schema is the built-in tools' generator, not a second one.
	if diff := cmp.Diff(paramsOf(reflect.TypeFor[fileReadArgs]()), Schema[fileReadArgs]()); diff != "" {
		t.Errorf("Schema[fileReadArgs] differs from file_read's parameters (-params +Schema):\n%s", diff)
	}
}

func TestParamsOfRejectsUnsupportedFields(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"float", reflect.TypeFor[struct {
			X float64 `json:"x"`
		}](), "unsupported type float64"},
		{"slice", reflect.TypeFor[struct {
			X []string `json:"x"`
		}](), "unsupported type []string"},
		{"required pointer", reflect.TypeFor[struct {
			X *int `json:"x"`
		}](), "pointer but not omitempty"},
		{"no json name", reflect.TypeFor[struct {
			X string
		}](), "needs an exported field with a json name"},
		{"not a struct", reflect.TypeFor[string](), "is not a struct"},
		{"max on a string", reflect.TypeFor[struct {
			X string `json:"x" max:"3"`
		}](), "max to ints only"},
		{"min on a boolean", reflect.TypeFor[struct {
			X bool `json:"x" min:"1"`
		}](), "min applies to strings and ints"},
		{"bound not an integer", reflect.TypeFor[struct {
			X int `json:"x" min:"one"`
		}](), `min tag "one", want an integer`},
		{"bound too large", reflect.TypeFor[struct {
			X int `json:"x" max:"9007199254740993"`
		}](), `max tag "9007199254740993", want an integer within`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if msg, _ := p.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("paramsOf(%s) panicked with %v, want a panic containing %q", tc.typ, p, tc.want)
				}
			}()
			paramsOf(tc.typ)
		})
	}
}

func TestParse(t *testing.T) {
	read, _ := lookup(FileRead)
	list, _ := lookup(FileList)
	edit, _ := lookup(FileEdit)
	one, five, zero := 1, 5, 0
	dot, empty := ".", ""
	tests := []struct {
		name string
		tool tool
		text string
		want any    // the argument struct when valid
		msg  string // else contained in the message
	}{
		{"required only", read, `{"path":"a.go"}`, fileReadArgs{Path: "a.go"}, ""},
		{"optional integers present", read, `{"path":"a.go","start_line":1,"end_line":5}`,
			fileReadArgs{Path: "a.go", StartLine: &one, EndLine: &five}, ""},
		{"zero is present, not absent", read, `{"path":"a.go","start_line":0}`, fileReadArgs{Path: "a.go", StartLine: &zero}, ""},
		{"integers are clamped", read, `{"path":"a.go","start_line":99999999999999999,"end_line":-99999999999999999}`,
			fileReadArgs{Path: "a.go", StartLine: ptrTo(1 << 40), EndLine: ptrTo(-1 << 40)}, ""},
		{"absent path", list, `{}`, fileListArgs{}, ""},
		{"dot path", list, `{"path":"."}`, fileListArgs{Path: &dot}, ""},
		{"empty path is given", list, `{"path":""}`, fileListArgs{Path: &empty}, ""},
		{"booleans", edit, `{"path":"a","old_string":"x","new_string":"y","replace_all":true}`,
			fileEditArgs{Path: "a", OldString: "x", NewString: "y", ReplaceAll: true}, ""},
		{"empty text means {}", list, ``, fileListArgs{}, ""},
		{"decode error", read, `{"path":`, nil, `Invalid tool arguments: unexpected end of JSON input (is a brace or quote missing?); send a JSON object such as {"path": string, "end_line"?: integer, "start_line"?: integer}`},
		{"validation error", read, `{"path":"a.go","start_line":"1"}`, nil,
			`Invalid arguments for file_read: argument "start_line" must be an integer, got a string; expected {"path": string, "end_line"?: integer, "start_line"?: integer}`},
		{"missing", edit, `{"path":"a"}`, nil, "Invalid arguments for file_edit: missing arguments: [new_string, old_string]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := tc.tool.parse(tc.text)
			if tc.msg != "" {
				if got != nil || !strings.Contains(msg, tc.msg) {
					t.Fatalf("parse(%s) = %v, %q; want nil, containing %q", tc.text, got, msg, tc.msg)
				}
				return
			}
			if msg != "" {
				t.Fatalf("parse(%s) message = %q, want none", tc.text, msg)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parse(%s) mismatch (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// TestDecodeIntoDisagreement checks that arguments the schema would have
// refused are an error, not a silently zero field.
func TestDecodeIntoDisagreement(t *testing.T) {
	typ := reflect.TypeFor[fileReadArgs]()
	for _, args := range []map[string]any{
		{},
		{"path": json.Number("1")},
		{"path": "a", "start_line": json.Number("1.5")},
		{"path": "a", "start_line": true},
	} {
		if v, err := decodeInto(typ, args); err == nil {
			t.Errorf("decodeInto(%v) = %+v, want an error", args, v)
		}
	}
	if v, err := decodeInto(reflect.TypeFor[fileEditArgs](), map[string]any{"path": "a", "old_string": "b", "new_string": "c", "replace_all": "yes"}); err == nil {
		t.Errorf("decodeInto(replace_all string) = %+v, want an error", v)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestParseExported(t *testing.T) {
	zero, sixty := 0, 60
	tests := []struct {
		name string
		raw  string
		want boundedArgs // when err is ""
		err  string      // the whole error text
	}{
		{"required only", `{"task":"x"}`, boundedArgs{Task: "x"}, ""},
		{"every field", `{"task":"é","label":"abc","wait":60,"depth":-2}`, boundedArgs{Task: "é", Label: "abc", Wait: &sixty, Depth: -2}, ""},
		{"lower bounds are inclusive", `{"task":"x","wait":0}`, boundedArgs{Task: "x", Wait: &zero}, ""},
		{"minus zero is zero", `{"task":"x","wait":-0}`, boundedArgs{Task: "x", Wait: &zero}, ""},
		{"length counts characters, not bytes", `{"task":"x","label":"éé"}`, boundedArgs{}, `argument "label" must be at least 3 characters long, got 2`},
		{"empty string", `{"task":""}`, boundedArgs{}, `argument "task" must not be empty`},
		{"below the minimum", `{"task":"x","wait":-1}`, boundedArgs{}, `argument "wait" must be at least 0, got -1`},
		{"above the maximum", `{"task":"x","wait":61}`, boundedArgs{}, `argument "wait" must be at most 60, got 61`},
		{"far above the maximum", `{"task":"x","wait":99999999999999999}`, boundedArgs{}, `argument "wait" must be at most 60, got 99999999999999999`},
		{"below a negative minimum", `{"task":"x","depth":-3}`, boundedArgs{}, `argument "depth" must be at least -2, got -3`},
		{"types come before bounds", `{"task":"","wait":1.5}`, boundedArgs{}, `argument "wait" must be an integer, got the number 1.5`},
		{"missing", `{"wait":1}`, boundedArgs{}, `missing arguments: [task]`},
		{"unknown", `{"task":"x","cwd":"/"}`, boundedArgs{}, `unknown arguments: [cwd] (accepted: [depth, label, task, wait])`},
		{"not an object", `["x"]`, boundedArgs{}, `expected a JSON object, got an array`},
		{"null is not {}", `null`, boundedArgs{}, `expected a JSON object, got null`},
		{"empty text is not {}", ` `, boundedArgs{}, `expected a JSON object, got no text`},
		{"not JSON", `{"task":`, boundedArgs{}, `unexpected end of JSON input (is a brace or quote missing?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse[boundedArgs]([]byte(tc.raw))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Parse(%s) = %+v, %v; want error %q", tc.raw, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%s) error = %v, want none", tc.raw, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", tc.raw, diff)
			}
		})
	}
}
