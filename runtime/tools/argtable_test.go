package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/runtime/tools"
)

// argTable is testdata/args.json, the argument validation cases that the
// editor tool module's validator (lua/flow/tools/args.lua) must judge as
// Go does; its "doc" field describes the format. plugin's TestArgTableLua
// runs the same file through Lua.
type argTable struct {
	Classes map[string]map[string][]string `json:"classes"`
	Schemas map[string]any                 `json:"schemas"`
	Cases   []argCase                      `json:"cases"`
}

type argCase struct {
	Name   string `json:"name"`
	Schema any    `json:"schema"`
	Args   any    `json:"args"`
	Want   any    `json:"want"`
	At     string `json:"at"`
	Lua    any    `json:"lua"`
	Why    string `json:"why"`
}

// TestArgTable runs every case of testdata/args.json through DecodeArgs and
// ValidateArgs, as a tool call's argument text goes, and checks the outcome
// against the case's want: "ok", or a refusal whose message has each
// keyword of the wanted classes and names the argument at.
func TestArgTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "args.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // as DecodeArgs does, so 1.0 stays 1.0
	var tab argTable
	if err := dec.Decode(&tab); err != nil {
		t.Fatalf("testdata/args.json: %v", err)
	}
	for _, c := range tab.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if (c.Lua == nil) != (c.Why == "") {
				t.Fatalf("lua and why go together; the case has lua %v, why %q", c.Lua, c.Why)
			}
			schema := c.Schema
			if name, ok := schema.(string); ok {
				schema = tab.Schemas[name]
			}
			obj, ok := schema.(map[string]any)
			if !ok {
				t.Fatalf("schema %v is not an object", c.Schema)
			}
			text, err := json.Marshal(expandArgs(t, c.Args))
			if err != nil {
				t.Fatal(err)
			}
			args, err := tools.DecodeArgs(string(text))
			if err == nil {
				err = tools.ValidateArgs(obj, args)
			}
			if msg := argOutcome(tab.Classes, c.Want, c.At, err); msg != "" {
				t.Errorf("DecodeArgs and ValidateArgs(%.100s): %s", text, msg)
			}
		})
	}
}

// argOutcome compares err with want ("ok", a class or a list of classes)
// and returns what differs, or "".
func argOutcome(classes map[string]map[string][]string, want any, at string, err error) string {
	if want == "ok" {
		if err != nil {
			return fmt.Sprintf("%v, want ok", err)
		}
		return ""
	}
	var names []string
	switch w := want.(type) {
	case string:
		names = []string{w}
	case []any:
		for _, n := range w {
			s, _ := n.(string)
			names = append(names, s)
		}
	}
	if err == nil {
		return fmt.Sprintf("ok, want a refusal of class %v", names)
	}
	msg := err.Error()
	for _, n := range names {
		keywords := classes[n]["go"]
		if len(keywords) == 0 {
			return fmt.Sprintf("class %q has no Go keywords", n)
		}
		for _, k := range keywords {
			if !strings.Contains(msg, k) {
				return fmt.Sprintf("%q, want class %s (containing %q)", msg, n, k)
			}
		}
	}
	if at != "" && !strings.Contains(msg, at) {
		return fmt.Sprintf("%q, want it to name %s", msg, at)
	}
	return ""
}

// expandArgs replaces the generators of the table ($repeat, $nest) by the
// values they stand for.
func expandArgs(t *testing.T, v any) any {
	t.Helper()
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandArgs(t, e)
		}
		return out
	case map[string]any:
		if inner, ok := x["$repeat"]; ok {
			inner = expandArgs(t, inner)
			out := make([]any, count(t, x["$times"]))
			for i := range out {
				out[i] = inner
			}
			return out
		}
		if inner, ok := x["$nest"]; ok {
			v := expandArgs(t, inner)
			key, _ := x["$key"].(string)
			for range count(t, x["$depth"]) {
				if key != "" {
					v = map[string]any{key: v}
				} else {
					v = []any{v}
				}
			}
			return v
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expandArgs(t, e)
		}
		return out
	}
	return v
}

func count(t *testing.T, v any) int {
	t.Helper()
	n, ok := v.(json.Number)
	i, err := n.Int64()
	if !ok || err != nil {
		t.Fatalf("generator count %v is not an integer", v)
	}
	return int(i)
}
