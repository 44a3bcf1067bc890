package bufferfs

import (
	"fmt"
	"unicode/utf8"
)

// EditDiagnostics are the error diagnostics the editor's language server
// published for a buffer right after [Editor.Write] changed it, so that the
// coder sees a type error before the checks run. Only the Editor fills
// them, and only when a language server is attached to the buffer.
type EditDiagnostics struct {
	// Status is "ok" (no errors), "failed" (Errors holds them) or
	// "unavailable" (nothing was published within the editor's wait).
	Status string `json:"status"`
	// Reason says what a non-ok status means and what to do.
	Reason string `json:"reason,omitempty"`
	// Clients names the language servers attached to the buffer.
	Clients []string `json:"clients,omitempty"`
	// WaitedMS is how long the editor waited for the diagnostics.
	WaitedMS int64 `json:"waited_ms"`
	// Errors are the buffer's error diagnostics (at most 20).
	Errors []EditDiagnostic `json:"errors,omitempty"`
	// Omitted counts the errors past the first 20.
	Omitted int64 `json:"omitted,omitempty"`
}

// EditDiagnostic is one error: a 1-based line, a 0-based byte column.
type EditDiagnostic struct {
	Line    int64  `json:"line"`
	Column  int64  `json:"column"`
	Message string `json:"message"`
	Source  string `json:"source,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Bounds on what an editor may put into a write result.
const (
	maxEditErrors      = 20
	maxEditMessageLen  = 500
	maxEditClientNames = 8
)

// editDiagnostics decodes the "diagnostics" field of a file_write result;
// nil when absent or not an object.
func editDiagnostics(res map[string]any) *EditDiagnostics {
	m, ok := res["diagnostics"].(map[string]any)
	if !ok {
		return nil
	}
	d := &EditDiagnostics{Status: clip(fieldString(m, "status"))}
	switch d.Status {
	case "ok", "failed", "unavailable":
	default:
		return nil
	}
	d.Reason = clip(fieldString(m, "reason"))
	d.WaitedMS, _ = fieldInt(m, "waited_ms")
	d.Omitted, _ = fieldInt(m, "omitted")
	if names, ok := m["clients"].([]any); ok {
		for _, n := range names {
			if s, ok := n.(string); ok && len(d.Clients) < maxEditClientNames {
				d.Clients = append(d.Clients, clip(s))
			}
		}
	}
	errs, _ := m["errors"].([]any)
	for _, e := range errs {
		em, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if len(d.Errors) == maxEditErrors {
			d.Omitted++
			continue
		}
		line, _ := fieldInt(em, "line")
		col, _ := fieldInt(em, "column")
		code := ""
		if c, ok := em["code"]; ok && c != nil {
			code = fmt.Sprint(c)
		}
		d.Errors = append(d.Errors, EditDiagnostic{
			Line: line, Column: col, Message: clip(fieldString(em, "message")),
			Source: clip(fieldString(em, "source")), Code: clip(code),
		})
	}
	return d
}

// clip bounds an editor-provided string, on a rune boundary.
func clip(s string) string {
	if len(s) <= maxEditMessageLen {
		return s
	}
	cut := maxEditMessageLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
