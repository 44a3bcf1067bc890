package model_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"flow/runtime/model"
)

var offered = []string{"file_read", "file_write", "file_search"}

func call(name, args string) model.ToolCall { return model.ToolCall{Name: name, Arguments: args} }

func TestTextToolCalls(t *testing.T) {
	t.Parallel()
	read := call("file_read", `{"path":"calc.go"}`)
	tests := []struct {
		name    string
		content string
		want    []model.ToolCall
	}{
		// What small models write.
		{"bare object", `{"name": "file_read", "arguments": {"path": "calc.go"}}`, []model.ToolCall{read}},
		{"bare object with spaces around", "\n  {\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}  \n", []model.ToolCall{read}},
		{"fenced json", "```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}\n```", []model.ToolCall{read}},
		{"fenced without info string", "```\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}\n```", []model.ToolCall{read}},
		{"fenced after prose", "I will read the file first.\n```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}\n```\nThen I fix it.", []model.ToolCall{read}},
		{"prose then object", "Let me look at it.\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}", []model.ToolCall{read}},
		{"prose with braces then object", "The func f() {} is wrong. {\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}", []model.ToolCall{read}},
		{"arguments as a JSON string", `{"name": "file_read", "arguments": "{\"path\": \"calc.go\"}"}`, []model.ToolCall{read}},
		{"parameters instead of arguments", `{"name": "file_read", "parameters": {"path": "calc.go"}}`, []model.ToolCall{read}},
		{"OpenAI function wrapper", `{"type": "function", "function": {"name": "file_read", "arguments": "{\"path\":\"calc.go\"}"}}`, []model.ToolCall{read}},
		{"list of calls", `[{"name": "file_read", "arguments": {"path": "calc.go"}}, {"name": "file_search", "arguments": {"pattern": "Add"}}]`,
			[]model.ToolCall{read, call("file_search", `{"pattern":"Add"}`)}},
		{"two fenced blocks", "```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"a\"}}\n```\nand\n```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"b\"}}\n```",
			[]model.ToolCall{call("file_read", `{"path":"a"}`), call("file_read", `{"path":"b"}`)}},
		{"leaked tool_call block", "<tool_call>\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}\n</tool_call>", []model.ToolCall{read}},
		{"two leaked blocks", "<tool_call>{\"name\":\"file_read\",\"arguments\":{\"path\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"file_write\",\"arguments\":{\"path\":\"a\",\"content\":\"x\"}}</tool_call>",
			[]model.ToolCall{call("file_read", `{"path":"a"}`), call("file_write", `{"path":"a","content":"x"}`)}},
		{"leaked block without its closing tag", "Reading.\n<tool_call>\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}", []model.ToolCall{read}},
		{"leaked block with a fence inside", "<tool_call>\n```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}}\n```\n</tool_call>", []model.ToolCall{read}},
		{"tags win over a trailing object", "<tool_call>{\"name\":\"file_read\",\"arguments\":{\"path\":\"a\"}}</tool_call> {\"name\":\"file_read\",\"arguments\":{\"path\":\"b\"}}",
			[]model.ToolCall{call("file_read", `{"path":"a"}`)}},
		{"empty arguments", `{"name": "file_search", "arguments": {}}`, []model.ToolCall{call("file_search", `{}`)}},
		{"unoffered call dropped from a list", `[{"name": "shell", "arguments": {}}, {"name": "file_read", "arguments": {"path": "calc.go"}}]`, []model.ToolCall{read}},
		// The form flow's instructions show a call in: the name, then the arguments.
		{"name and arguments", `file_read {"path": "calc.go"}`, []model.ToolCall{read}},
		{"name and arguments in a go fence", "Here:\n```go\nfile_read {\"path\": \"calc.go\"}\n```", []model.ToolCall{read}},
		{"a commented-out line is not one", "```python\n# file_read {\"path\": \"a\"}\nfile_read {\"path\": \"calc.go\"}\n```", []model.ToolCall{read}},
		{"name and parenthesised arguments", `file_read({"path": "calc.go"});`, []model.ToolCall{read}},
		{"name and arguments in backquotes, after a list marker", "Next:\n- `file_read {\"path\": \"calc.go\"}`", []model.ToolCall{read}},
		{"arguments over several lines", "file_write {\n  \"path\": \"a\",\n  \"content\": \"x\"\n}\nfile_search {\"pattern\": \"Add\"}",
			[]model.ToolCall{call("file_write", `{"path":"a","content":"x"}`), call("file_search", `{"pattern":"Add"}`)}},

		// Not calls.
		{"plain text", "All done: nothing to change.", nil},
		{"mentions a tool", "I will use file_read to read calc.go, then file_write.", nil},
		{"mentions a tool in JSON-like prose", `Call file_read with {"path": "calc.go"} next.`, nil},
		{"object in the middle of prose", `First {"name": "file_read", "arguments": {"path": "calc.go"}} and then more text.`, nil},
		{"unoffered tool", `{"name": "shell_exec", "arguments": {"command": "make"}}`, nil},
		{"no arguments", `{"name": "file_read"}`, nil},
		{"arguments not an object", `{"name": "file_read", "arguments": ["calc.go"]}`, nil},
		{"arguments string not JSON", `{"name": "file_read", "arguments": "calc.go"}`, nil},
		{"empty name", `{"name": "", "arguments": {}}`, nil},
		{"name not a string", `{"name": 7, "arguments": {}}`, nil},
		{"malformed JSON", `{"name": "file_read", "arguments": {"path": "calc.go"}`, nil},
		{"malformed inside tags", "<tool_call>\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"calc.go\"}\n</tool_call>", nil},
		{"a verdict", `{"approved": true, "summary": "looks right"}`, nil},
		{"list with a non-call", `[{"name": "file_read", "arguments": {"path": "a"}}, 3]`, nil},
		{"empty list", `[]`, nil},
		{"fenced go code", "```go\nfunc f() { g(map[string]any{\"name\": \"file_read\", \"arguments\": {}}) }\n```", nil},
		{"a name in prose", "I ran file_search {} and it passed.", nil},
		{"a name and arguments with text after them", `file_read {"path": "calc.go"} and then I fix it`, nil},
		{"another name that starts like a tool's", `file_reader {"path": "calc.go"}`, nil},
		{"a name and malformed arguments", `file_read {"path": "calc.go"`, nil},
		{"a name and arguments that are no object", `file_read ["calc.go"]`, nil},
		{"a name commented out", "// file_read {\"path\": \"calc.go\"}", nil},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := model.TextToolCalls(tc.content, offered)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TextToolCalls(%q) = %+v, want %+v", tc.content, got, tc.want)
			}
		})
	}
}

func TestTextToolCallsNothingOffered(t *testing.T) {
	t.Parallel()
	if got := model.TextToolCalls(`{"name": "file_read", "arguments": {}}`, nil); got != nil {
		t.Errorf("TextToolCalls with no tools offered = %+v, want none", got)
	}
}

// TestTextToolCallsHostile checks that deeply nested or brace-heavy replies
// neither hang nor find a call.
func TestTextToolCallsHostile(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		strings.Repeat("{", 200000) + "}",
		strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000),
		strings.Repeat("```json\n{}\n```\n", 20000),
		strings.Repeat("<tool_call>{", 20000),
		strings.Repeat("file_read {\n", 20000),
		strings.Repeat("file_read {\"a\": [", 20000),
	} {
		if got := model.TextToolCalls(s, offered); len(got) != 0 {
			t.Errorf("TextToolCalls(hostile %d bytes) = %d calls, want none", len(s), len(got))
		}
	}
}

func FuzzTextToolCalls(f *testing.F) {
	f.Add(`{"name": "file_read", "arguments": {"path": "calc.go"}}`)
	f.Add("```json\n{\"name\": \"file_read\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}\n```")
	f.Add("<tool_call>\n{\"name\": \"file_write\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}\n</tool_call>")
	f.Add(`Reading it. [{"name": "file_read", "arguments": {}}, {"function": {"name": "file_search", "arguments": {"pattern": "x"}}}]`)
	f.Add("I will use file_read.")
	f.Add("```go\nfile_write {\n  \"path\": \"a\",\n  \"content\": \"x\"\n}\n```\n- `file_read({\"path\": \"b\"})`")
	f.Fuzz(func(t *testing.T, content string) {
		calls := model.TextToolCalls(content, offered)
		for _, c := range calls {
			known := false
			for _, o := range offered {
				known = known || c.Name == o
			}
			if !known {
				t.Fatalf("call to %q, which was not offered", c.Name)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
				t.Fatalf("call %q has arguments %q that are not a JSON object: %v", c.Name, c.Arguments, err)
			}
			if c.ID != "" {
				t.Fatalf("call %q has an id %q; ids are the caller's", c.Name, c.ID)
			}
			if !utf8.ValidString(c.Arguments) && utf8.ValidString(content) {
				t.Fatalf("valid UTF-8 content gave invalid UTF-8 arguments %q", c.Arguments)
			}
		}
		if len(calls) > 0 && !strings.Contains(content, "{") {
			t.Fatalf("calls found in %q, which has no JSON object", content)
		}
	})
}
