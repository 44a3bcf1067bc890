package tools

import (
	"context"
	"slices"
	"strings"
	"testing"

	"flow/bufferfs"
	"flow/runtime/model"
	"flow/runtime/report"
)

// fakeChecks is a CheckRunner that returns a fixed report and records the
// names it was asked to run.
type fakeChecks struct {
	rep   report.CheckReport
	names []string
}

func (f *fakeChecks) Run(_ context.Context, name string) report.CheckReport {
	f.names = append(f.names, name)
	return f.rep
}

func toolNames(tools []model.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestSchemasRoleMatrix(t *testing.T) {
	read := []string{FileRead, FileList, FileSearch}
	all := []string{FileRead, FileList, FileSearch, FileEdit, FileWrite, FlowCheck}
	tests := []struct {
		role    string
		trusted bool
		checks  bool
		want    []string
	}{
		{"planner", true, true, read},
		{"reviewer", true, true, read},
		{"coder", true, true, all},
		{"coder", true, false, []string{FileRead, FileList, FileSearch, FileEdit, FileWrite}},
		{"coder", false, true, read},
		{"planner", false, false, read},
		{"nobody", true, true, nil},
	}
	for _, tc := range tests {
		opts := Options{Trusted: tc.trusted}
		if tc.checks {
			opts.Checks = &fakeChecks{}
		}
		r := New(newDisk(t, tc.trusted, nil), opts)
		got := toolNames(r.Schemas(tc.role))
		if !slices.Equal(got, tc.want) {
			t.Errorf("Schemas(%s) trusted=%v checks=%v = %v, want %v", tc.role, tc.trusted, tc.checks, got, tc.want)
		}
		for _, name := range all {
			allowed := RoleAllows(tc.role, name, tc.trusted) && (name != FlowCheck || tc.checks)
			if allowed != slices.Contains(tc.want, name) {
				t.Errorf("RoleAllows(%s, %s, %v) = %v, disagrees with Schemas", tc.role, name, tc.trusted, allowed)
			}
		}
	}
}

func TestSchemasShape(t *testing.T) {
	r := New(newDisk(t, true, nil), Options{Trusted: true, Checks: &fakeChecks{}})
	for _, tool := range r.Schemas("coder") {
		p := tool.Parameters
		if p["type"] != "object" || p["additionalProperties"] != false {
			t.Errorf("%s parameters = %v, want a closed object", tool.Name, p)
		}
		if _, ok := p["properties"].(map[string]any); !ok {
			t.Errorf("%s has no properties", tool.Name)
		}
		if !strings.Contains(tool.Description, "Example: {") || len(tool.Description) > 400 {
			t.Errorf("%s description = %q, want a short text with an example", tool.Name, tool.Description)
		}
		// The example must itself be valid arguments for the tool.
		example := tool.Description[strings.Index(tool.Description, "Example: ")+len("Example: "):]
		args, err := DecodeArgs(example)
		if err == nil {
			err = ValidateArgs(p, args)
		}
		if err != nil {
			t.Errorf("%s example %s is invalid: %v", tool.Name, example, err)
		}
	}
	// Schemas returns fresh maps: changing one does not leak.
	r.Schemas("coder")[0].Parameters["type"] = "broken"
	if got := r.Schemas("coder")[0].Parameters["type"]; got != "object" {
		t.Errorf("Schemas after caller mutation: type = %v, want object", got)
	}
}

func TestCallDenied(t *testing.T) {
	d := newDisk(t, true, map[string]string{"a.txt": "hello\n"})
	r := New(d, Options{Trusted: true, Checks: &fakeChecks{}})
	untrusted := New(newDisk(t, false, nil), Options{Checks: &fakeChecks{}})
	tests := []struct {
		name     string
		reg      *Registry
		role     string
		tool     string
		args     string
		wantErr  []string
		wantNoFS bool
	}{
		{"planner write", r, "planner", "file_write", `{"path":"a.txt","content":"x"}`,
			[]string{"Tool 'file_write' is unavailable for role planner", "file_read, file_list, file_search"}, true},
		{"reviewer edit", r, "reviewer", "file_edit", `{"path":"a.txt","old_string":"h","new_string":"j"}`,
			[]string{"Tool 'file_edit' is unavailable for role reviewer"}, true},
		{"reviewer check", r, "reviewer", "flow_check", `{}`, []string{"Tool 'flow_check' is unavailable for role reviewer"}, true},
		{"untrusted coder write", untrusted, "coder", "file_write", `{"path":"a.txt","content":"x"}`,
			[]string{"Tool 'file_write' is unavailable for role coder"}, true},
		{"unknown tool", r, "coder", "shell", `{}`,
			[]string{`unknown tool "shell"`, "file_read, file_list, file_search, file_edit, file_write, flow_check"}, true},
		{"empty tool name", r, "coder", "", `{}`, []string{`unknown tool ""`}, true},
		{"unknown role", r, "admin", "file_read", `{"path":"a.txt"}`, []string{"unavailable for role admin", "are: none"}, true},
		{"malformed JSON", r, "coder", "file_write", `{"path":"a.txt",`,
			[]string{"Invalid tool arguments: ", "send a JSON object such as {\"content\": string, \"path\": string}"}, true},
		{"array arguments", r, "coder", "file_read", `["a.txt"]`, []string{"Invalid tool arguments: expected a JSON object, got an array"}, true},
		{"unknown argument", r, "coder", "file_write", `{"path":"a.txt","content":"x","mode":"0600"}`,
			[]string{"Invalid arguments for file_write: unknown arguments: [mode] (accepted: [content, path])"}, true},
		{"missing argument", r, "coder", "file_read", ``,
			[]string{"Invalid arguments for file_read: missing arguments: [path]", `expected {"path": string, "end_line"?: integer, "start_line"?: integer}`}, true},
		{"wrong type", r, "coder", "file_read", `{"path":"a.txt","start_line":true}`,
			[]string{`argument "start_line" must be an integer, got a boolean`}, true},
		{"float line", r, "coder", "file_read", `{"path":"a.txt","start_line":1.0}`,
			[]string{`argument "start_line" must be an integer, got the number 1.0`}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := call(t, tc.reg, tc.role, tc.tool, tc.args)
			if res.Status != "error" {
				t.Fatalf("Call(%s, %s) status = %q, want error", tc.tool, tc.args, res.Status)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(res.Error, want) {
					t.Errorf("Call(%s, %s) error = %q, want containing %q", tc.tool, tc.args, res.Error, want)
				}
			}
			if res.Changed != "" {
				t.Errorf("Changed = %q after a refused call", res.Changed)
			}
			if got := readDisk(t, d, "a.txt"); got != "hello\n" {
				t.Errorf("a.txt = %q after a refused call", got)
			}
		})
	}
}

// panicFS is an FS whose Read panics.
type panicFS struct{ bufferfs.FS }

func (panicFS) Read(context.Context, string, int64) (bufferfs.File, error) { panic("boom") }

func TestCallRecoversPanic(t *testing.T) {
	r := New(panicFS{newDisk(t, false, nil)}, Options{})
	res, _ := call(t, r, "planner", "file_read", `{"path":"a.txt"}`)
	if res.Status != "error" || !strings.Contains(res.Error, "internal error in tool file_read: boom") {
		t.Fatalf("Call with panicking FS = %+v, want an internal error result", res)
	}
}

func TestCallCancelled(t *testing.T) {
	r := New(newDisk(t, false, map[string]string{"a.txt": "x"}), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := r.Call(ctx, "planner", model.ToolCall{Name: "file_read", Arguments: `{"path":"a.txt"}`})
	if res.Status != "error" || !strings.Contains(res.Error, "cancelled") {
		t.Fatalf("Call with cancelled context = %+v, want a cancelled error", res)
	}
}
