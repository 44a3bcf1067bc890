package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/runtime/editor"
	"flow/runtime/report"
)

// Limits of the editor bridge (doc/design.md §11.3, §16); its defaults are in
// defaults.go.
const (
	// MaxSchemas is the most tool schemas an editor may advertise.
	MaxSchemas = 64
)

// EditorTools are the editor tools offered to the model, in order. Only
// editor_lint and editor_check can change state; the others are read-only.
var EditorTools = []string{
	"editor_context", "editor_diagnostics", "editor_symbols", "editor_references",
	"editor_lint", "editor_check", "editor_scip", "editor_debug",
}

// fileTools are the bridged file tools bufferfs.Editor uses; they are
// callable but never offered to the model as editor tools.
var fileTools = []string{"file_read", "file_write"}

// BridgeOptions configure a [Bridge].
type BridgeOptions struct {
	// Module is the Lua module with schemas() and call(); "" means
	// [DefaultModule]. It must be a plain dotted module name.
	Module string
	// Timeout bounds every request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Root is flow's workspace root. The editor's workspace must resolve to
	// the same directory, or every editor tool and edit is refused.
	Root string
	// Anchor, when set, names a workspace file for the freshness probe
	// to ask about when nothing has been read or written through the
	// bridge yet and the editor cannot describe its current buffer (see
	// [Bridge.Context]); "" when there is none.
	Anchor func(ctx context.Context) string
	// Logger receives one debug record per editor request (tool,
	// duration, status, failure); nil discards them.
	Logger *slog.Logger
}

// Bridge is the editor bridge client of doc/design.md §11.3 over a go-client
// connection. It evaluates only two fixed Lua strings,
//
//	return require('<module>').schemas()
//	return require('<module>').call(...)
//
// with the tool name and arguments as RPC arguments, never interpolated.
// Every request is bounded by the timeout; a timeout or transport failure
// marks the bridge unavailable for good, and every later call fails
// closed. Before every tool call except editor_context it checks the
// editor's freshness API v1 and workspace, asking about the file the call
// names (editor_context {path = ...}), so the kind of the editor's current
// buffer does not matter. Its methods are safe for concurrent use; it
// implements [bufferfs.EditorBridge].
type Bridge struct {
	v          *nvim.Nvim
	module     string
	timeout    time.Duration
	root       string
	schemasLua string
	callLua    string
	anchorFn   func(ctx context.Context) string
	log        *slog.Logger

	mu      sync.Mutex
	failed  error
	schemas []map[string]any
	fetched bool
	anchor  string // the last path the editor described; see Context
}

var _ bufferfs.EditorBridge = (*Bridge)(nil)

// NewBridge returns a Bridge to the Neovim at v.
func NewBridge(v *nvim.Nvim, opts BridgeOptions) (*Bridge, error) {
	mod := moduleOr(opts.Module, DefaultModule)
	if !ValidModuleName(mod) {
		return nil, fmt.Errorf("editor module %q: must be a Lua module name such as flow.tools", mod)
	}
	if opts.Root == "" {
		return nil, errors.New("editor bridge: empty workspace root")
	}
	t := opts.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bridge{
		anchorFn:   opts.Anchor,
		log:        log,
		v:          v,
		module:     mod,
		timeout:    t,
		root:       opts.Root,
		schemasLua: "return require('" + mod + "').schemas()",
		callLua:    "return require('" + mod + "').call(...)",
	}, nil
}

// Module returns the editor tool module the bridge calls.
func (b *Bridge) Module() string { return b.module }

// ValidModuleName accepts dotted Lua module names made of letters, digits,
// '_' and '-', so a name can never carry Lua code into the fixed strings.
func ValidModuleName(s string) bool {
	if s == "" || len(s) > 128 || strings.Contains(s, "..") || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}

// Err returns why the bridge is unavailable, or nil.
func (b *Bridge) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed
}

// fail marks the bridge unavailable (the first reason wins) and returns
// the resulting error.
func (b *Bridge) fail(reason string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed == nil {
		b.failed = &editor.Error{Msg: "Neovim bridge unavailable: " + reason}
	}
	return b.failed
}

// exec evaluates one of the fixed Lua strings with args, bounded by the
// timeout and ctx. go-client calls take no context, so the call runs in a
// goroutine; an abandoned call finishes (or fails) when Neovim answers or
// the connection closes, and its reply is dropped.
func (b *Bridge) exec(ctx context.Context, code string, args ...any) (any, error) {
	if err := b.Err(); err != nil {
		return nil, err
	}
	type reply struct {
		v   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		var out *luaResult // a pointer: go-client sets it to nil for a nil result
		err := b.v.ExecLua(code, &out, args...)
		done <- reply{out.value(), err}
	}()
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			msg := editor.Message(r.err.Error())
			if strings.Contains(msg, "module '"+b.module+"' not found") {
				msg = "Neovim has no Lua module " + b.module +
					": load the editor tool module (Rose provides rose.tools), or name another with --editor-module"
			}
			return nil, b.fail(msg)
		}
		return r.v, nil
	case <-timer.C:
		return nil, b.fail(fmt.Sprintf("Neovim request timed out after %s", b.timeout))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Schemas returns the editor tool schemas offered to the model: the
// editor's entries whose name is one of [EditorTools], in the editor's
// order, with editor_debug's action narrowed to "status". They are fetched
// once; a failed fetch marks the bridge unavailable.
func (b *Bridge) Schemas(ctx context.Context) ([]map[string]any, error) {
	b.mu.Lock()
	if b.fetched {
		defer b.mu.Unlock()
		return b.schemas, nil
	}
	b.mu.Unlock()
	start := time.Now()
	raw, err := b.exec(ctx, b.schemasLua)
	b.logCall("schemas", start, nil, err)
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		if m, isMap := raw.(map[string]any); !isMap || len(m) > 0 {
			return nil, b.fail("editor schemas must be an array")
		}
	}
	if len(list) > MaxSchemas {
		return nil, b.fail(fmt.Sprintf("editor returned more than %d tool schemas", MaxSchemas))
	}
	kept := []map[string]any{}
	for _, e := range list {
		if s := filterSchema(e); s != nil {
			kept = append(kept, s)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.schemas, b.fetched = kept, true
	return kept, nil
}

// filterSchema returns a copy of a function-tool schema whose name is an
// editor tool, or nil.
func filterSchema(e any) map[string]any {
	m, ok := e.(map[string]any)
	if !ok || m["type"] != "function" {
		return nil
	}
	fn, ok := m["function"].(map[string]any)
	if !ok {
		return nil
	}
	name, _ := fn["name"].(string)
	params, ok := fn["parameters"].(map[string]any)
	if !ok || !slices.Contains(EditorTools, name) {
		return nil
	}
	params = copyMap(params)
	props, _ := params["properties"].(map[string]any)
	if name == "editor_debug" {
		if props == nil {
			return nil
		}
		props = copyMap(props)
		props["action"] = map[string]any{"type": "string", "enum": []any{"status"}}
	}
	if props != nil {
		params["properties"] = props
	} else if list, isList := params["properties"].([]any); isList && len(list) == 0 {
		params["properties"] = map[string]any{}
	}
	if req, isMap := params["required"].(map[string]any); isMap && len(req) == 0 {
		params["required"] = []any{}
	}
	out := copyMap(m)
	fnCopy := copyMap(fn)
	fnCopy["parameters"] = params
	out["function"] = fnCopy
	return out
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Tools returns the names of the editor tools the editor advertises (nil
// when the schemas cannot be fetched).
func (b *Bridge) Tools(ctx context.Context) []string {
	list, err := b.Schemas(ctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(list))
	for _, s := range list {
		names = append(names, s["function"].(map[string]any)["name"].(string))
	}
	return names
}

// Context is the freshness probe (doc/design.md §11.7): editor_context about the
// last file the editor described for this bridge (the one flow last read
// or wrote), so that what the editor's current buffer is (a help page, a
// terminal, a file tree, a file outside the workspace) does not matter;
// the dirty-buffer list and the snapshot it returns cover the whole
// workspace either way. Before any such file it asks about the current
// buffer, and when the editor cannot describe that, about the workspace
// file [BridgeOptions.Anchor] names. It validates the freshness fields and
// the workspace. A transport failure marks the bridge unavailable; an
// invalid context is an [*editor.Error] but leaves the bridge usable.
func (b *Bridge) Context(ctx context.Context) (editor.Context, error) {
	b.mu.Lock()
	anchor := b.anchor
	b.mu.Unlock()
	if anchor != "" {
		return b.contextOf(ctx, anchor)
	}
	res, err := b.request(ctx, "editor_context", map[string]any{})
	if err != nil {
		return editor.Context{}, err
	}
	c, err := editor.ParseContext(res, b.root)
	if err == nil || fieldString(res, "status") == "ok" || b.anchorFn == nil {
		return c, err
	}
	path := b.anchorFn(ctx)
	if path == "" {
		return c, err
	}
	// The first question about a path makes the editor observe it; ask
	// once more so that the snapshot compared later already holds it,
	// whatever order the editor observes and snapshots in.
	if _, err := b.contextOf(ctx, path); err != nil {
		return editor.Context{}, err
	}
	return b.contextOf(ctx, path)
}

// contextOf calls editor_context {path = path} and validates it; a valid
// result makes path the bridge's anchor.
func (b *Bridge) contextOf(ctx context.Context, path string) (editor.Context, error) {
	res, err := b.request(ctx, "editor_context", map[string]any{"path": path})
	if err != nil {
		return editor.Context{}, err
	}
	c, err := editor.ParseContext(res, b.root)
	if err == nil {
		b.mu.Lock()
		b.anchor = path
		b.mu.Unlock()
	}
	return c, err
}

// request calls the module's call(name, args) and requires an object
// result. The result's error text is cleaned of Lua's positions.
func (b *Bridge) request(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	start := time.Now()
	raw, err := b.exec(ctx, b.callLua, tool, wireArgs(args))
	if err != nil {
		b.logCall(tool, start, nil, err)
		return nil, err
	}
	res, ok := raw.(map[string]any)
	if !ok {
		res = errorResult("editor returned a non-object tool result")
	}
	if msg, ok := res["error"].(string); ok {
		res["error"] = editor.Message(msg)
	}
	b.logCall(tool, start, res, nil)
	return res, nil
}

// logCall records one editor request at debug level.
func (b *Bridge) logCall(tool string, start time.Time, res map[string]any, err error) {
	if !b.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []any{"tool", tool, "duration", time.Since(start)}
	switch {
	case err != nil:
		attrs = append(attrs, "error", err.Error())
	case res != nil:
		st := fieldString(res, "status")
		attrs = append(attrs, "status", st)
		if st != report.StatusOK {
			attrs = append(attrs, "error", fieldString(res, "error"))
		}
	}
	b.log.Debug("editor bridge call", attrs...)
}

func fieldString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Call calls an editor tool. Tools outside [EditorTools] and file_read /
// file_write get an error result without reaching the editor; editor_debug
// only ever runs with action "status". Every call except editor_context is
// preceded by the freshness gate of [Bridge.Context]; when it fails, the
// result is {status: "unavailable", error: ...} and the tool is not called
// (an editor_context result that fails the gate is replaced the same way). A
// non-nil error means the bridge failed (it is then unavailable) or ctx
// ended.
func (b *Bridge) Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	if !slices.Contains(EditorTools, tool) && !slices.Contains(fileTools, tool) {
		return errorResult("Editor tool is not allowlisted"), nil
	}
	if args == nil {
		args = map[string]any{}
	}
	if tool == "editor_debug" {
		if a, ok := args["action"]; ok && a != "status" {
			return errorResult("editor_debug launch/run is manual, not an agent tool; only action \"status\" is allowed"), nil
		}
		args = copyMap(args)
		args["action"] = "status"
	}
	if tool == "editor_context" {
		res, err := b.request(ctx, tool, args)
		if err != nil {
			return nil, err
		}
		if fieldString(res, "status") != report.StatusOK {
			return res, nil // the editor's own word on that buffer
		}
		if _, err := editor.ParseContext(res, b.root); err != nil {
			return unavailableResult(err), nil
		}
		if p, ok := args["path"].(string); ok && p != "" {
			b.mu.Lock()
			b.anchor = p
			b.mu.Unlock()
		}
		return res, nil
	}
	start := time.Now()
	res, err := b.gate(ctx, tool, args)
	if err != nil || res != nil {
		// Refused before the tool reached the editor: logged under the
		// tool's name too, so the log shows why each operation failed.
		b.logCall(tool, start, res, err)
		return res, err
	}
	return b.request(ctx, tool, args)
}

// gate is the freshness gate before a call of tool: it asks about the file
// the call names (editor_context {path = ...}), else runs the probe of
// [Bridge.Context]. It returns the refusal result (or the bridge failure),
// or nil when the tool may run. A file_write over a buffer with unsaved
// changes is refused here; the editor module refuses it too, but flow does
// not rely on that.
func (b *Bridge) gate(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	var c editor.Context
	var err error
	path, hasPath := args["path"].(string)
	if hasPath && path != "" {
		res, rerr := b.request(ctx, "editor_context", map[string]any{"path": path})
		if rerr != nil {
			return nil, rerr
		}
		if fieldString(res, "status") != report.StatusOK {
			return res, nil // the editor refused the path itself
		}
		if c, err = editor.ParseContext(res, b.root); err == nil {
			b.mu.Lock()
			b.anchor = path
			b.mu.Unlock()
		}
	} else {
		c, err = b.Context(ctx)
	}
	if err != nil {
		if errors.Is(err, bufferfs.ErrEditorUnavailable) && b.Err() == nil {
			return unavailableResult(err), nil
		}
		return nil, err
	}
	if tool == "file_write" && c.Modified {
		res := map[string]any{"status": report.StatusError, "code": "dirty_buffer",
			"error": "buffer " + path + " has unsaved changes: save or discard it"}
		if n, ok := c.Raw["bufnr"]; ok {
			res["bufnr"] = n
		}
		return res, nil
	}
	return nil, nil
}

// Status describes the bridge for a status report: ok with the advertised
// tools, or unavailable with the reason.
func (b *Bridge) Status(ctx context.Context) report.Editor {
	ed := report.Editor{Status: report.StatusUnavailable}
	tools := b.Tools(ctx)
	c, err := b.Context(ctx)
	switch {
	case b.Err() != nil:
		msg := b.Err().Error()
		ed.Error = &msg
	case err != nil:
		msg := err.Error()
		ed.Error = &msg
		ed.Tools = append(ed.Tools, tools...)
	default:
		ed.Status, ed.Attached, ed.Workspace = report.StatusOK, true, c.Workspace
		ed.Tools = append(ed.Tools, tools...)
	}
	return ed
}

func errorResult(msg string) map[string]any {
	return map[string]any{"status": report.StatusError, "error": msg}
}

// unavailableResult is the result of a call the freshness gate refused.
func unavailableResult(err error) map[string]any {
	return map[string]any{"status": report.StatusUnavailable, "error": err.Error()}
}

// wireArgs converts arguments decoded from JSON for msgpack: json.Number
// and integral float64 values become int64 (so Lua sees integers, and a
// json.Number is never sent as a string).
func wireArgs(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, e := range v {
		out[k] = wireValue(e)
	}
	return out
}

func wireValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return wireValue(f)
		}
		return string(x)
	case float64:
		if x == float64(int64(x)) && x > -1<<53 && x < 1<<53 {
			return int64(x)
		}
	case map[string]any:
		return wireArgs(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wireValue(e)
		}
		return out
	}
	return v
}
