package bufferfs

import (
	"strings"
	"testing"
)

// What an editor puts into a write result is bounded and checked: an
// unknown status is dropped, errors past 20 are counted, long text is
// clipped on a rune boundary and a numeric LSP code becomes text.
func TestEditDiagnosticsDecode(t *testing.T) {
	if d := editDiagnostics(map[string]any{"status": "ok"}); d != nil {
		t.Errorf("no diagnostics field = %+v, want nil", d)
	}
	if d := editDiagnostics(map[string]any{"diagnostics": map[string]any{"status": "great"}}); d != nil {
		t.Errorf("unknown status = %+v, want nil", d)
	}
	var errs []any
	for i := range 25 {
		errs = append(errs, map[string]any{"line": int64(i + 1), "column": uint64(2), "message": strings.Repeat("é", 400), "code": int64(7)})
	}
	d := editDiagnostics(map[string]any{"diagnostics": map[string]any{
		"status": "failed", "waited_ms": int64(12), "clients": []any{"gopls", 3}, "errors": errs, "omitted": int64(1),
	}})
	if d == nil || d.Status != "failed" || d.WaitedMS != 12 || len(d.Errors) != 20 || d.Omitted != 6 {
		t.Fatalf("decoded = %+v, want failed, 12 ms, 20 errors and 6 omitted", d)
	}
	if e := d.Errors[0]; e.Line != 1 || e.Column != 2 || e.Code != "7" || len(e.Message) > maxEditMessageLen+len("…") || !strings.HasSuffix(e.Message, "é…") {
		t.Errorf("first error = %+v, want line 1, column 2, code \"7\" and a clipped message", e)
	}
	if len(d.Clients) != 1 || d.Clients[0] != "gopls" {
		t.Errorf("clients = %v, want [gopls]", d.Clients)
	}
}
