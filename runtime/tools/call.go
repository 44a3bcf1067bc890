package tools

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/config"
	"flow/runtime/model"
)

// Tool names.
const (
	FileRead   = "file_read"
	FileList   = "file_list"
	FileSearch = "file_search"
	FileEdit   = "file_edit"
	FileWrite  = "file_write"
	FlowCheck  = "flow_check"
)

// tool is one built-in tool: its description, its argument struct (from
// which its schema is generated, see args.go) and its handler.
type tool struct {
	name string
	// desc is the embedded Markdown description.
	desc string
	// args is the tool's argument struct type.
	args reflect.Type
	// run gets a value of type args.
	run func(r *Registry, ctx context.Context, args any) Result
}

// builtins returns the tools in the order they are offered to a model.
func builtins() []tool {
	return []tool{
		builtin(FileRead, fileReadDoc, (*Registry).fileRead),
		builtin(FileList, fileListDoc, (*Registry).fileList),
		builtin(FileSearch, fileSearchDoc, (*Registry).fileSearch),
		builtin(FileEdit, fileEditDoc, (*Registry).fileEdit),
		builtin(FileWrite, fileWriteDoc, (*Registry).fileWrite),
		builtin(FlowCheck, flowCheckDoc, (*Registry).flowCheck),
	}
}

// lookup returns the built-in tool called name.
func lookup(name string) (tool, bool) {
	for _, t := range builtins() {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// New returns a Registry whose file tools work on fsys.
func New(fsys bufferfs.FS, opts Options) *Registry {
	return &Registry{fs: fsys, opts: opts}
}

// RoleAllows reports whether the role matrix of doc/design.md §5 offers tool to role:
// file_read, file_list and file_search to every role; file_edit, file_write
// and flow_check to the coder of a trusted workspace only. Unknown roles and
// tools get nothing. (A Registry also hides flow_check when it has no
// [CheckRunner].)
func RoleAllows(role, tool string, trusted bool) bool {
	switch role {
	case config.RolePlanner, config.RoleCoder, config.RoleReviewer:
	default:
		return false
	}
	switch tool {
	case FileRead, FileList, FileSearch:
		return true
	case FileEdit, FileWrite, FlowCheck:
		return role == config.RoleCoder && trusted
	}
	return false
}

// offered reports whether this registry offers tool name to role.
func (r *Registry) offered(role, name string) bool {
	if name == FlowCheck && r.opts.Checks == nil {
		return false
	}
	return RoleAllows(role, name, r.opts.Trusted)
}

// Schemas returns the tools offered to role, in a fixed order. Each call
// returns fresh values the caller may keep or change.
func (r *Registry) Schemas(role string) []model.Tool {
	var out []model.Tool
	for _, t := range builtins() {
		if r.offered(role, t.name) {
			out = append(out, model.Tool{Name: t.name, Description: t.desc, Parameters: t.params()})
		}
	}
	return out
}

// names returns the names of the tools offered to role.
func (r *Registry) names(role string) string {
	var names []string
	for _, t := range r.Schemas(role) {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Call runs one tool call for role and returns its result. It never panics
// and never returns a Go error: denied, unknown and malformed calls, failed
// file operations and even a panicking handler all become an error result
// the model can act on.
func (r *Registry) Call(ctx context.Context, role string, call model.ToolCall) (res Result) {
	defer contain(call.Name, &res)
	t, ok := lookup(call.Name)
	if !ok {
		return errorf("unknown tool %q; the available tools are: %s", text.Truncate(call.Name, 64), r.names(role))
	}
	if !r.offered(role, t.name) {
		return errorf("Tool '%s' is unavailable for role %s; the available tools are: %s",
			t.name, text.Truncate(role, 32), r.names(role))
	}
	args, msg := t.parse(call.Arguments)
	if msg != "" {
		return errorResult(msg)
	}
	if err := ctx.Err(); err != nil {
		return errorf("%s cancelled: %v", t.name, err)
	}
	return t.run(r, ctx, args)
}

// contain is the one recovery of a tool call (deferred by every toolbox's
// Call): a panicking handler becomes an error result the model reads,
// never a crash of the run.
func contain(tool string, res *Result) {
	if p := recover(); p != nil {
		*res = errorf("internal error in tool %s: %v; this is a bug in flow, not in your call; try a different approach",
			text.Truncate(tool, 64), p)
	}
}

// usage describes a tool's arguments, e.g.
// {"path": string, "start_line"?: integer}.
func usage(t tool) string { return usageOf(t.params()) }

// usageOf describes the arguments of an object schema: required keys
// first, then the optional ones marked "?", each with its JSON type.
func usageOf(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	req, _ := stringList(schema["required"])
	for _, k := range req {
		required[k] = true
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if required[keys[i]] != required[keys[j]] {
			return required[keys[i]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		typ := "any"
		if p, ok := props[k].(map[string]any); ok {
			if s, ok := p["type"].(string); ok {
				typ = s
			}
		}
		opt := ""
		if !required[k] {
			opt = "?"
		}
		parts[i] = fmt.Sprintf("%q%s: %s", k, opt, typ)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// object returns a closed object schema.
func object(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// prop returns a property schema of type typ.
func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}
