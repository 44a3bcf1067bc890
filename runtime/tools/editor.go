package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/config"
	"flow/runtime/editor"
	"flow/runtime/model"
	"flow/runtime/report"
)

// Editor is the editor as the tools see it (doc/design.md §11.3): the tool part of
// the attached editor's session. Schemas returns the editor tool schemas
// the editor advertises (already narrowed to the allowlisted editor tools);
// Call calls one tool and returns the editor's result object, or a Go error
// when the attachment failed.
type Editor = editor.Tools

// Editor tools that can change state: only the coder of a trusted workspace
// gets them. Every other editor tool is read-only and offered to all roles.
const (
	EditorLint  = "editor_lint"
	EditorCheck = "editor_check"
	EditorDebug = "editor_debug"
)

// EditorRoleAllows reports whether an (advertised) editor tool is offered to
// role: editor_lint and editor_check to the coder of a trusted workspace,
// the read-only editor tools to every role.
func EditorRoleAllows(role, tool string, trusted bool) bool {
	switch role {
	case config.RolePlanner, config.RoleCoder, config.RoleReviewer:
	default:
		return false
	}
	if tool == EditorLint || tool == EditorCheck {
		return role == config.RoleCoder && trusted
	}
	return true
}

// EditorToolbox offers a Registry's tools plus the editor's (doc/design.md §5, §12):
// the built-in tools first, then the editor tools in the order the editor
// advertised them, each filtered by [EditorRoleAllows]. editor_debug's
// action is always "status". The schemas are fetched once, when the
// toolbox is built; when the editor cannot give them, no editor tool is
// offered. EditorToolbox also implements verify.EditorEvidence (Lint,
// Diagnostics).
type EditorToolbox struct {
	reg     *Registry
	ed      Editor
	schemas []model.Tool
}

// WithEditor returns a toolbox of reg's tools and ed's, fetching ed's tool
// schemas with ctx. When the editor cannot give them, the toolbox offers
// only reg's tools and the error says why, for the caller to report.
func WithEditor(ctx context.Context, reg *Registry, ed Editor) (*EditorToolbox, error) {
	b := &EditorToolbox{reg: reg, ed: ed}
	list, err := ed.Schemas(ctx)
	if err != nil {
		return b, fmt.Errorf("editor tools unavailable: %w", err)
	}
	b.schemas = editorTools(list)
	return b, nil
}

// editorTools turns advertised schemas into model tools.
func editorTools(list []map[string]any) []model.Tool {
	var out []model.Tool
	for _, s := range list {
		fn, _ := s["function"].(map[string]any)
		name, _ := fn["name"].(string)
		params, _ := fn["parameters"].(map[string]any)
		if name == "" || params == nil {
			continue
		}
		desc, _ := fn["description"].(string)
		if name == EditorDebug {
			params = narrowDebug(params)
		}
		out = append(out, model.Tool{Name: name, Description: desc, Parameters: params})
	}
	return out
}

// editorSchemas returns the editor's tools.
func (b *EditorToolbox) editorSchemas() []model.Tool { return b.schemas }

// narrowDebug returns params with editor_debug's action limited to status.
func narrowDebug(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		out[k] = v
	}
	props := map[string]any{}
	if p, ok := params["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	props["action"] = map[string]any{"type": "string", "enum": []any{"status"}}
	out["properties"] = props
	return out
}

// editorTool returns the advertised editor tool called name.
func (b *EditorToolbox) editorTool(name string) (model.Tool, bool) {
	for _, t := range b.editorSchemas() {
		if t.Name == name {
			return t, true
		}
	}
	return model.Tool{}, false
}

// Schemas returns the tools offered to role.
func (b *EditorToolbox) Schemas(role string) []model.Tool {
	out := b.reg.Schemas(role)
	for _, t := range b.editorSchemas() {
		if EditorRoleAllows(role, t.Name, b.reg.opts.Trusted) {
			out = append(out, model.Tool{Name: t.Name, Description: t.Description, Parameters: copyJSON(t.Parameters)})
		}
	}
	return out
}

// copyJSON returns a deep copy of a schema.
func copyJSON(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(data, &out) != nil {
		return m
	}
	return out
}

// Call runs one tool call: an editor tool through the editor (arguments
// validated against its schema, a path argument checked by the path
// rules, editor_debug only with action "status"), anything else through
// the Registry. It never returns a Go error.
func (b *EditorToolbox) Call(ctx context.Context, role string, call model.ToolCall) (res Result) {
	t, ok := b.editorTool(call.Name)
	if !ok {
		return b.reg.Call(ctx, role, call)
	}
	defer contain(t.Name, &res)
	if !EditorRoleAllows(role, t.Name, b.reg.opts.Trusted) {
		return errorf("Tool '%s' is unavailable for role %s", t.Name, text.Truncate(role, 32))
	}
	args, err := DecodeArgs(call.Arguments)
	if err != nil {
		return errorf("Invalid tool arguments: %v; send a JSON object", err)
	}
	if err := ValidateArgs(t.Parameters, args); err != nil {
		return errorf("Invalid arguments for %s: %v", t.Name, err)
	}
	if t.Name == EditorDebug {
		if a, has := args["action"]; has && a != "status" {
			return errorf("editor_debug launch/run is manual, not an agent tool; use action \"status\"")
		}
	}
	if p, has := args["path"].(string); has {
		if _, err := bufferfs.ValidPath(p); err != nil {
			return errorf("%s: %v", t.Name, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return errorf("%s cancelled: %v", t.Name, err)
	}
	out, err := b.ed.Call(ctx, t.Name, args)
	if err != nil {
		return editorUnavailable(err)
	}
	return editorResult(out)
}

// editorUnavailable is the result of a call the bridge could not make.
func editorUnavailable(err error) Result {
	msg := text.Truncate(err.Error(), maxErrorChars)
	b, _ := json.Marshal(map[string]any{"status": report.StatusUnavailable, "error": msg})
	return Result{Status: report.StatusUnavailable, Error: msg, Content: string(b)}
}

// editorResult bounds an editor result object to MaxResultChars: when it is
// too large, its largest values are dropped (the result then says
// truncated) until it fits.
func editorResult(out map[string]any) Result {
	status, _ := out["status"].(string)
	if status == "" {
		status = report.StatusError
	}
	msg, _ := out["error"].(string)
	keys := make([]string, 0, len(out))
	for k := range out {
		if k != "status" && k != "error" {
			keys = append(keys, k)
		}
	}
	// Drop the largest values first.
	size := func(k string) int {
		data, _ := json.Marshal(out[k])
		return len(data)
	}
	slices.SortFunc(keys, func(a, b string) int { return size(b) - size(a) })
	content, truncated := fit(status, len(keys), func(keep int) any {
		m := map[string]any{"status": status}
		if msg != "" {
			m["error"] = text.Truncate(msg, maxErrorChars)
		}
		for _, k := range keys[len(keys)-keep:] {
			m[k] = out[k]
		}
		if keep < len(keys) {
			m["truncated"] = true
		}
		return m
	})
	return Result{Status: status, Error: msg, Content: content, Truncated: truncated}
}

// Lint runs the editor's native linter on path (verify.EditorEvidence). It
// returns nil when the editor does not offer editor_lint.
func (b *EditorToolbox) Lint(ctx context.Context, path string) map[string]any {
	return EditorEvidence{Editor: b.ed}.Lint(ctx, path)
}

// Diagnostics returns the editor's current diagnostics for path
// (verify.EditorEvidence); nil when the editor does not offer them.
func (b *EditorToolbox) Diagnostics(ctx context.Context, path string) map[string]any {
	return EditorEvidence{Editor: b.ed}.Diagnostics(ctx, path)
}

// EditorEvidence is the coverage evidence of the attached editor
// (verify.EditorEvidence): editor_lint and editor_diagnostics results, when
// the editor advertises them. It needs no tool registry.
type EditorEvidence struct{ Editor Editor }

// Lint runs the editor's native linter on path; nil when the editor does
// not offer editor_lint.
func (e EditorEvidence) Lint(ctx context.Context, path string) map[string]any {
	return e.evidence(ctx, EditorLint, path)
}

// Diagnostics returns the editor's current diagnostics for path; nil when
// the editor does not offer editor_diagnostics.
func (e EditorEvidence) Diagnostics(ctx context.Context, path string) map[string]any {
	return e.evidence(ctx, "editor_diagnostics", path)
}

func (e EditorEvidence) evidence(ctx context.Context, tool, path string) map[string]any {
	// An editor that cannot list its tools offers none: no evidence, as
	// for a tool it does not advertise (the run reported the failure when
	// its toolbox was built).
	list, err := e.Editor.Schemas(ctx)
	if err != nil || !slices.ContainsFunc(editorTools(list), func(t model.Tool) bool { return t.Name == tool }) {
		return nil
	}
	out, err := e.Editor.Call(ctx, tool, map[string]any{"path": path})
	if err != nil {
		return map[string]any{"status": report.StatusUnavailable, "error": err.Error()}
	}
	if out == nil {
		return map[string]any{"status": report.StatusError, "error": fmt.Sprintf("%s returned nothing", tool)}
	}
	return out
}
