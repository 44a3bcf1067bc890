package bufferfs

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors of [Editor]. Its refusals are [*PathError]s whose Err wraps
// one of these (or one of the Disk's), so callers can test the kind with
// errors.Is and show Error() to a model.
var (
	// ErrConflict: the file or its buffer changed since flow read it, or the
	// buffer's text differs from the file on disk.
	ErrConflict = errors.New("file changed since it was read")
	// ErrDirtyBuffer: the file is open in the editor with unsaved changes.
	ErrDirtyBuffer = errors.New("file has unsaved changes in the editor")
	// ErrEditorUnavailable: the editor bridge failed (timeout, transport
	// error, wrong workspace, missing freshness API). Editor operations
	// then fail closed; there is never a silent fallback to disk writes.
	ErrEditorUnavailable = errors.New("editor unavailable")
)

// editorRefusal turns a refused editor tool result into a cause: the
// result's code field when the editor module sets one (flow.tools does),
// else the reference messages of Rose's rose.tools.
func editorRefusal(res map[string]any) error {
	msg, _ := res["error"].(string)
	if msg == "" {
		msg = "the editor refused the operation (status " + strconv.Quote(fieldString(res, "status")) + ")"
	}
	code, _ := res["code"].(string)
	bufnr, hasBuf := fieldInt(res, "bufnr")
	lower := strings.ToLower(msg)
	switch {
	case code == "dirty_buffer" || code == "" && strings.Contains(lower, "unsaved buffer"):
		where := "Neovim"
		if hasBuf {
			where += " (buffer " + strconv.FormatInt(bufnr, 10) + ")"
		}
		return rule(ErrDirtyBuffer, "file has unsaved changes in "+where,
			"save or discard them first, or ask the user to; the file was not written")
	case code == "conflict" || code == "" && (strings.Contains(lower, "changed since read") ||
		strings.Contains(lower, "differs from loaded buffer") || strings.Contains(lower, "changed while")):
		return rule(ErrConflict, msg, "the file was not written; read it again and redo the change")
	case code == "not_found":
		return rule(ErrNotFound, msg, "check the path with file_list")
	case code == "too_large":
		return rule(ErrTooLarge, msg, "")
	case code == "protected":
		return errProtected
	case code == "read_only" && strings.Contains(lower, "not trusted"):
		return rule(ErrEditorUnavailable, msg, "the editor's tool module was set up without trust")
	}
	if fieldString(res, "status") == "unavailable" {
		return rule(ErrEditorUnavailable, msg, "")
	}
	return errors.New(msg)
}

// fieldString returns m[key] when it is a string.
func fieldString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// fieldInt returns m[key] as an integer when it is an integral number of
// any of the shapes a msgpack or JSON decoder produces.
func fieldInt(m map[string]any, key string) (int64, bool) {
	switch v := m[key].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case uint64:
		return int64(v), true
	case float64:
		if v == float64(int64(v)) {
			return int64(v), true
		}
	}
	return 0, false
}
