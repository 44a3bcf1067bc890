package editor

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"flow/bufferfs"
)

// Freshness API v1 (doc/design.md §11.7): what flow requires of an editor_context
// result, and how two workspace snapshots compare.

// Context is the validated freshness part of an editor_context result.
type Context struct {
	// Workspace is the editor's workspace root as it reported it.
	Workspace string
	// Modified is the captured buffer's 'modified' flag.
	Modified bool
	// DirtyBuffers lists every modified loaded workspace buffer.
	DirtyBuffers []any
	// Snapshot maps a workspace path to {path, buffers, disk}.
	Snapshot map[string]any
	// Raw is the whole result.
	Raw map[string]any
}

// Dirty reports unsaved state: the captured buffer is modified or some
// workspace buffer is.
func (c Context) Dirty() bool { return c.Modified || len(c.DirtyBuffers) > 0 }

// Messages of the freshness gate.
const (
	msgFreshnessAPI = "editor workspace freshness API v1 is unavailable; update the editor's tool module"
	msgMismatch     = "editor/flow workspace mismatch; refusing editor tools and edits"
)

// ParseContext validates an editor_context result against flow's
// root: status "ok", a workspace that resolves to root, and the v1
// freshness fields (modified, dirty_buffers, workspace_snapshot,
// workspace_snapshot_version = 1). Every failure is an [*Error] wrapping
// [bufferfs.ErrEditorUnavailable] whose text says the cause once: flow
// then refuses editor tools and edits.
func ParseContext(res map[string]any, root string) (Context, error) {
	ws, ok := res["workspace"].(string)
	if fieldString(res, "status") != "ok" || !ok {
		detail := Message(fieldString(res, "error"))
		if detail == "" {
			detail = fmt.Sprintf("editor_context returned %v", res)
			if len(detail) > 300 {
				detail = detail[:300] + "..."
			}
		}
		return Context{}, &Error{Msg: detail}
	}
	if !sameDir(ws, root) {
		return Context{}, &Error{Msg: fmt.Sprintf("%s (editor %q, flow %q)", msgMismatch, ws, root)}
	}
	c := Context{Workspace: ws, Raw: res}
	version, ok := fieldInt(res, "workspace_snapshot_version")
	modified, okMod := res["modified"].(bool)
	snap, okSnap := objectOrEmpty(res["workspace_snapshot"])
	dirty, okDirty := listOrEmpty(res["dirty_buffers"])
	if !ok || version != 1 || !okMod || !okSnap || !okDirty {
		return Context{}, &Error{Msg: msgFreshnessAPI}
	}
	c.Modified, c.Snapshot, c.DirtyBuffers = modified, snap, dirty
	return c, nil
}

// Error is a failure of the attached editor: its message says the cause
// once (no "editor unavailable: ..." chain), and it wraps
// [bufferfs.ErrEditorUnavailable] for errors.Is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Unwrap returns [bufferfs.ErrEditorUnavailable].
func (e *Error) Unwrap() error { return bufferfs.ErrEditorUnavailable }

// luaPosition matches the "file.lua:12: " and `[string "..."]:1: ` prefixes
// Lua's error() puts before a message, at its start or after a ": ".
var luaPosition = regexp.MustCompile(`(^|: )(?:[^\s:]+\.lua:\d+: |\[string "[^"]*"\]:\d+: )+`)

// Message returns an editor's error text as one line for people: without
// the file:line: positions Lua adds, without a traceback, at most 300
// bytes.
func Message(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(luaPosition.ReplaceAllString(s, "$1"))
	// The wrappers go-client and Neovim put around a Lua error.
	for _, p := range []string{"nvim:nvim_exec_lua exception: ", "Error executing lua: "} {
		s = strings.TrimPrefix(s, p)
	}
	s = strings.TrimSuffix(s, ":")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// sameDir reports whether two paths name the same directory once symlinks
// are resolved. One spelling names one directory, which spares resolving
// it twice at every freshness check (the editor reports flow's root as
// flow spells it, its real path).
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// objectOrEmpty accepts a map, or an empty array (how an empty Lua table
// travels).
func objectOrEmpty(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case []any:
		return map[string]any{}, len(x) == 0
	}
	return nil, false
}

// listOrEmpty accepts an array, or an empty map.
func listOrEmpty(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case map[string]any:
		return nil, len(x) == 0
	}
	return nil, false
}

// SameSnapshot reports whether two workspace snapshots are deep-equal, the
// rule around checks (doc/design.md §11.7). Numbers compare by value whatever their
// decoded type.
func SameSnapshot(a, b map[string]any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// SameObserved reports whether later keeps everything earlier observed, the
// rule between verification and the end of review (doc/design.md §11.7): every path
// of earlier is in later with an equal disk record, and every buffer of
// earlier (matched by bufnr) is unchanged. New paths and buffers are
// allowed. It returns a short reason when they differ.
func SameObserved(earlier, later map[string]any) (bool, string) {
	for p, v := range earlier {
		old, _ := v.(map[string]any)
		cur, ok := later[p].(map[string]any)
		if !ok {
			return false, p + " is no longer observed"
		}
		if !reflect.DeepEqual(normalize(old["disk"]), normalize(cur["disk"])) {
			return false, p + " changed on disk"
		}
		now := map[int64]any{}
		list, _ := cur["buffers"].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				if n, ok := fieldInt(m, "bufnr"); ok {
					now[n] = normalize(m)
				}
			}
		}
		before, _ := old["buffers"].([]any)
		for _, b := range before {
			m, _ := b.(map[string]any)
			n, ok := fieldInt(m, "bufnr")
			if !ok {
				continue
			}
			if !reflect.DeepEqual(normalize(m), now[n]) {
				return false, fmt.Sprintf("%s: buffer %d changed", p, n)
			}
		}
	}
	return true, ""
}

// normalize maps every number to float64 (integers beyond 2^53 keep their
// exact decimal text), byte strings to strings, and empty arrays and maps
// to nil, so values decoded from msgpack or JSON compare by value.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []byte:
		return string(x)
	case int:
		return number(float64(x), fmt.Sprint(x))
	case int64:
		return number(float64(x), fmt.Sprint(x))
	case int32:
		return float64(x)
	case uint64:
		return number(float64(x), fmt.Sprint(x))
	case uint32:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return number(x, fmt.Sprint(int64(x)))
		}
		return x
	}
	return v
}

// number keeps integers beyond float64's exact range as decimal text.
func number(f float64, text string) any {
	if math.Abs(f) <= 1<<53 {
		return f
	}
	return "#" + strings.TrimPrefix(text, "+")
}

// fieldString returns m[key] when it is a string.
func fieldString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// fieldInt returns m[key] as an integer when it is an integral number of
// any of the shapes a msgpack or JSON decoder produces (see normalize).
func fieldInt(m map[string]any, key string) (int64, bool) {
	f, ok := normalize(m[key]).(float64)
	if !ok || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}
