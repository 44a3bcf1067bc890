package agent

import (
	"strings"
	"testing"

	"flow/runtime/progress"
	"flow/runtime/report"
)

// TestRunReportsDiffs: each edit's tool_end event carries that edit's diff,
// and the report carries each changed file's whole change since the run
// began, for a modified and an added file.
func TestRunReportsDiffs(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n\nfunc A() int { return 1 } // broken\n"})
	cfg := testConfig(dir, goLint())
	be := newScripted(t,
		do(tc("p1", "file_list", nil)),
		say("1. Edit a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "return 1", "new_string": "return 2"})),
		do(tc("c3", "file_write", map[string]any{"path": "b.txt", "content": "new\n"})),
		say("Edited a.go."),
		say(verdict(true, "looks right")),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK {
		t.Fatalf("Run() = %s (%q %q), want ok", rep.Status, rep.Reason, rep.Error)
	}

	var edits []*report.FileDiff
	for _, e := range h.events {
		if e.Kind == progress.ToolEnd && (e.Tool == "file_edit" || e.Tool == "file_write") {
			edits = append(edits, e.Diff)
		}
	}
	if len(edits) != 3 {
		t.Fatalf("edit events = %d, want 3", len(edits))
	}
	for i, want := range []struct{ path, minus, plus string }{
		{"a.go", "-func A() int { return 1 } // broken", "+func A() int { return 1 } // fixed"},
		{"a.go", "-func A() int { return 1 } // fixed", "+func A() int { return 2 } // fixed"},
		{"b.txt", "--- /dev/null", "+new"},
	} {
		d := edits[i]
		if d == nil {
			t.Fatalf("edit %d has no diff", i)
		}
		if d.Path != want.path || !strings.Contains(d.Diff, want.minus+"\n") || !strings.Contains(d.Diff, want.plus+"\n") {
			t.Errorf("edit %d diff = %+v, want %s with %q and %q", i, d, want.path, want.minus, want.plus)
		}
	}
	if edits[0].Added != 1 || edits[0].Removed != 1 || len(edits[0].Hunks) != 1 || edits[0].Hunks[0] != 3 {
		t.Errorf("edit 0 counts = +%d -%d hunks %v, want +1 -1 [3]", edits[0].Added, edits[0].Removed, edits[0].Hunks)
	}

	if len(rep.Diffs) != 2 {
		t.Fatalf("report diffs = %+v, want a.go and b.txt", rep.Diffs)
	}
	a, b := rep.Diffs[0], rep.Diffs[1]
	if a.Path != "a.go" || a.Change != report.ChangeModified || a.Added != 1 || a.Removed != 1 ||
		!strings.Contains(a.Diff, "-func A() int { return 1 } // broken\n+func A() int { return 2 } // fixed\n") {
		t.Errorf("a.go diff = %+v, want the whole change since the run began", a)
	}
	if b.Path != "b.txt" || b.Change != report.ChangeAdded || b.Added != 1 || b.Truncated {
		t.Errorf("b.txt diff = %+v, want added +1", b)
	}
	// A read-only tool call carries no diff.
	for _, e := range h.events {
		if e.Kind == progress.ToolEnd && e.Tool == "file_list" && e.Diff != nil {
			t.Errorf("file_list event has a diff: %+v", e.Diff)
		}
	}
}

// TestRunDiffsAreBounded: the report's diffs together stay within
// maxReportDiffs; a file past the bound is marked cut and keeps its counts.
func TestRunDiffsAreBounded(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var fixed int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxIterations = 12
	cfg.Ollama.ContextLength = 131072
	cfg.Agent.MaxContextChars = 1000000
	big := strings.Repeat("a line of text that takes some room in the diff\n", 400) // ~20 KB
	steps := []step{do(tc("p1", "file_list", nil)), say("1. Write files.")}
	names := []string{"f1.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt", "f6.txt"}
	for _, n := range names {
		steps = append(steps, do(tc("c"+n, "file_write", map[string]any{"path": n, "content": big + n + "\n"})))
	}
	steps = append(steps, say("Wrote them."), say(verdict(true, "ok")))
	h := newHarness(t, cfg, newScripted(t, steps...))
	rep := h.run(t, "write files")
	if len(rep.Diffs) != len(names) {
		t.Fatalf("report diffs = %d, want %d (status %s %q %q)", len(rep.Diffs), len(names), rep.Status, rep.Reason, rep.Error)
	}
	total := 0
	for _, d := range rep.Diffs {
		total += len(d.Diff)
		if d.Added != 401 {
			t.Errorf("%s: added = %d, want 401 (counts describe the whole change)", d.Path, d.Added)
		}
		if !d.Truncated || !strings.Contains(d.Diff, "diff cut at") {
			t.Errorf("%s: a 20 KB diff is not marked cut (truncated=%v)", d.Path, d.Truncated)
		}
	}
	if total > maxReportDiffs+len(names)*minDiffRoom {
		t.Errorf("report diffs total %d bytes, want about %d at most", total, maxReportDiffs)
	}
	last := rep.Diffs[len(rep.Diffs)-1]
	if len(last.Diff) > minDiffRoom {
		t.Errorf("last file's diff = %d bytes past the total bound, want at most %d", len(last.Diff), minDiffRoom)
	}
}
