package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// feed delivers events to the model as one batch of a running job.
func feed(m *ui, events ...progress.Event) {
	if m.job == nil {
		m.job = &shownJob{id: 7, kind: "run", queue: newQueue(), shown: shown{diffs: map[string]bool{}}, start: m.now()}
	}
	items := make([]tea.Msg, len(events))
	for i, e := range events {
		items[i] = e
	}
	m.Update(jobMsg{id: m.job.id, items: items})
}

// Answers that arrive out of order (Bubble Tea runs commands concurrently,
// and /status takes longer than /models) still appear in the order the
// commands were typed, each under its echo.
func TestAnswersInTheOrderTyped(t *testing.T) {
	rt := newFake()
	rt.status = report.Status{Status: "ok", Workspace: "/work/demo"}
	rt.models = []model.ModelInfo{{Name: "qwen3"}}
	rt.tools = []string{"file_read"}
	m := newTestUI(t, rt, testOptions)
	status := submit(m, "/status")
	submit(m, "/help")
	models := submit(m, "/models")
	submit(m, "/tools")
	// The later command's answer arrives first.
	m.Update(runCmd(t, models))
	m.Update(runCmd(t, status))
	got := logText(m)
	order := []string{"› /status", "status ok", "› /help", "commands", "› /models", "models  1 installed model", "› /tools", "tools  1 tool"}
	at := -1
	for _, w := range order {
		i := strings.Index(got, w)
		if i < 0 {
			t.Fatalf("log lacks %q:\n%s", w, got)
		}
		if i < at {
			t.Errorf("%q is out of order; log:\n%s", w, got)
		}
		at = i
	}
	if strings.Contains(got, "  …") {
		t.Errorf("a reserved place is still empty:\n%s", got)
	}
}

// Every footer the UI shows fits 80 columns, and the idle one names every
// key there.
func TestFooterFitsEightyColumns(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	idle := ansi.Strip(m.hint())
	for _, p := range idleHints {
		if !strings.Contains(idle, p) {
			t.Errorf("idle footer %q lacks %q", idle, p)
		}
	}
	check := func(what string) {
		t.Helper()
		for i, l := range strings.Split(m.View().Content, "\n") {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("%s: line %d is %d columns wide: %q", what, i, w, ansi.Strip(l))
			}
		}
		// The footer itself fits: the view never has to cut it.
		if h := m.hint(); ansi.StringWidth(h) > 80 {
			t.Errorf("%s: footer %q is wider than 80 columns", what, ansi.Strip(h))
		}
	}
	check("idle")
	feed(m, progress.Event{Kind: progress.ToolStart, Role: "coder", Tool: "file_edit", Message: strings.Repeat("very/long/path/", 10) + "main.go"})
	check("long step")
	if h := ansi.Strip(m.hint()); !strings.Contains(h, "Ctrl-C cancels") || !strings.Contains(h, "coder file_edit very/") {
		t.Errorf("running footer = %q, want the step and Ctrl-C cancels", h)
	}
	m.job.cancelling = true
	check("cancelling")
	m.job = nil
	m.quitArmed = true
	check("quit armed")
	m.quitArmed = false
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 24})
	if h := ansi.Strip(m.hint()); ansi.StringWidth(h) > 40 || strings.HasSuffix(h, "…") {
		t.Errorf("footer at 40 columns = %q, want whole parts that fit", h)
	}
}

// The hint line shows a spinner, the current step and its elapsed time.
func TestHintShowsStepAndElapsed(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	m.now = func() time.Time { return now }
	feed(m,
		progress.Event{Kind: progress.RoleStart, Role: "coder", Message: "qwen3"},
		progress.Event{Kind: progress.ToolStart, Role: "coder", Tool: "file_edit", ToolCallID: "c1", Message: "main.go"},
	)
	now = t0.Add(3200 * time.Millisecond)
	hint := ansi.Strip(m.hint())
	if !strings.Contains(hint, "coder file_edit main.go 3.2s") || !strings.Contains(hint, m.spin.Spinner.Frames[0]) {
		t.Errorf("hint = %q, want the spinner, the tool call and 3.2s", hint)
	}
	feed(m, progress.Event{Kind: progress.ToolEnd, Role: "coder", Tool: "file_edit", ToolCallID: "c1", Message: "main.go", Status: "ok"})
	now = t0.Add(125 * time.Second)
	if hint := ansi.Strip(m.hint()); !strings.Contains(hint, "coder 2m05s") {
		t.Errorf("hint after the tool = %q, want the role and its elapsed time", hint)
	}
	// The spinner turns while the job runs and stops with it.
	_, cmd := m.Update(m.spin.Tick())
	if cmd == nil {
		t.Error("spinner tick while running returned no next tick")
	}
	m.job = nil
	if _, cmd := m.Update(m.spin.Tick()); cmd != nil {
		t.Error("spinner still ticking while idle")
	}
}

// The model's text streams into the log as it arrives, line by line, and
// each edit's diff follows its tool line, coloured and bounded.
func TestStreamedTextAndDiff(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	feed(m,
		progress.Event{Kind: progress.RoleStart, Role: "planner", Message: "qwen3"},
		progress.Event{Kind: progress.ModelTurn, Role: "planner", Turn: 1},
		progress.Event{Kind: progress.ModelDelta, Role: "planner", Turn: 1, Message: "\nPlan:\n1. Fix"},
	)
	assertContains(t, screen(m), "planner  turn 1  …\n  Plan:\n  1. Fix")
	feed(m, progress.Event{Kind: progress.ModelDelta, Role: "planner", Turn: 1, Message: " Add in calc.go\n2. Test"})
	assertContains(t, screen(m), "  Plan:\n  1. Fix Add in calc.go\n  2. Test")
	diff := "--- a/calc.go\n+++ b/calc.go\n@@ -1,3 +1,3 @@\n package calc\n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\n+\treturn\n"
	feed(m,
		progress.Event{Kind: progress.ModelReply, Role: "planner", Turn: 1, Status: "ok", DurationMS: 900},
		progress.Event{Kind: progress.ToolStart, Role: "coder", Turn: 1, Tool: "file_edit", ToolCallID: "c1", Message: "calc.go"},
		progress.Event{Kind: progress.ToolEnd, Role: "coder", Turn: 1, Tool: "file_edit", ToolCallID: "c1", Message: "calc.go", Status: "ok",
			Diff: &report.FileDiff{Path: "calc.go", Change: report.ChangeModified, Added: 1, Removed: 1, Diff: diff}},
	)
	got := screen(m)
	assertContains(t, got,
		"planner  turn 1  ok  900ms\n  Plan:",
		"coder  file_edit calc.go  ok  +1 -1\n    @@ -1,3 +1,3 @@\n     package calc\n    -func Add(a, b int) int { return a - b }\n    +func Add(a, b int) int { return a + b }\n    +    return",
	)
	assertLacks(t, got, "+++ b/calc.go")
	for _, l := range m.log {
		if strings.HasPrefix(l.text, "    +func") && l.kind != lineDiffAdd || strings.HasPrefix(l.text, "    -func") && l.kind != lineDiffDel {
			t.Errorf("diff line %q has style %d", l.text, l.kind)
		}
	}
	// A long diff is cut and says so; the summary does not repeat it.
	var long strings.Builder
	long.WriteString("@@ -1,0 +1,100 @@\n")
	for i := range 100 {
		fmt.Fprintf(&long, "+line %d\n", i)
	}
	feed(m, progress.Event{Kind: progress.ToolEnd, Role: "coder", Turn: 2, Tool: "file_write", ToolCallID: "c2", Message: "big.go", Status: "ok",
		Diff: &report.FileDiff{Path: "big.go", Change: report.ChangeAdded, Added: 100, Diff: long.String(), Truncated: true}})
	got = logText(m)
	assertContains(t, got, fmt.Sprintf("+line %d", maxDiffLines-2), "… (61 more diff lines)")
	assertLacks(t, got, fmt.Sprintf("+line %d\n", maxDiffLines))
	summary := runSummaryLines(report.Run{Status: "ok", ChangedFiles: []string{"big.go", "new.go"},
		Diffs: []report.FileDiff{{Path: "big.go", Added: 100}, {Path: "new.go", Added: 1, Diff: "@@ -0,0 +1 @@\n+package x\n"}}}, m.job.shown)
	var texts []string
	for _, l := range summary {
		texts = append(texts, l.text)
	}
	assertContains(t, strings.Join(texts, "\n"), "  changed  big.go  +100 -0\n  changed  new.go  +1 -0\n    @@ -0,0 +1 @@\n    +package x")
}

// A verification that finds a check failing shows the check's output
// tail in the log, and the run's summary does not repeat it.
func TestFailingCheckTailInLog(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	one := 1
	failing := report.CheckResult{Name: "test", Status: "failed", Returncode: &one,
		Stdout: "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: Add(2, 3) = -1, want 5\nFAIL\n"}
	feed(m, progress.Event{Kind: progress.Verification, Role: progress.PhaseVerification, Status: "failed",
		Verification: &report.Verification{Status: "failed", Checks: []report.CheckResult{failing}}})
	assertContains(t, screen(m), "  failing check  test  failed  exit 1", "    calc_test.go:7: Add(2, 3) = -1, want 5")
	m.Update(jobMsg{id: m.job.id, items: []tea.Msg{runDoneMsg{report: report.Run{Status: "failed", Checks: []report.CheckResult{failing}}}}})
	if n := strings.Count(logText(m), "Add(2, 3) = -1"); n != 1 {
		t.Errorf("check output shown %d times, want once:\n%s", n, logText(m))
	}
}

// The status report's warnings show in the header, on one line.
func TestWarningsInHeader(t *testing.T) {
	rt := newFake()
	rt.status = report.Status{Status: "ok", Warnings: []string{"no configuration file loaded", "no checks configured: runs cannot be verified"}}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, m.Init())
	header := strings.SplitN(screen(m), "\n", 4)[2]
	if header != "⚠ no configuration file loaded · no checks configured: runs cannot be verified" {
		t.Errorf("header warnings line = %q", header)
	}
	if m.logHeight != m.height-chromeLines-1 {
		t.Errorf("log height %d, want %d with the warnings line", m.logHeight, m.height-chromeLines-1)
	}
	// A /status answer brings the warnings up to date, and the layout.
	rt.status.Warnings = nil
	settle(t, m, submit(m, "/status"))
	if got := strings.SplitN(screen(m), "\n", 4)[2]; strings.HasPrefix(got, "⚠") || m.logHeight != m.height-chromeLines {
		t.Errorf("after a status without warnings: header line %q, log height %d", got, m.logHeight)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if n := len(strings.Split(m.View().Content, "\n")); n != 24 {
		t.Errorf("the view has %d lines on a 24-line terminal", n)
	}
	m.setWarnings([]string{"workspace is the home directory"})
	if n := len(strings.Split(m.View().Content, "\n")); n != 24 {
		t.Errorf("with a warning, the view has %d lines on a 24-line terminal", n)
	}
}

// PgUp shows older lines and stays there while lines arrive; PgDn goes
// back to the end.
func TestScrolling(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for i := range 100 {
		m.appendLines(logLine{text: fmt.Sprintf("line %03d", i)})
	}
	assertContains(t, screen(m), "line 099")
	press(m, tea.KeyPressMsg{Code: tea.KeyPgUp})
	up := screen(m)
	assertLacks(t, up, "line 099")
	assertContains(t, up, "line 081")
	m.appendLines(logLine{text: "line 100"})
	if screen(m) != up {
		t.Errorf("the scrolled view moved when a line arrived:\n%s", screen(m))
	}
	for range 20 {
		press(m, tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	assertContains(t, screen(m), "line 000")
	for range 20 {
		press(m, tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	assertContains(t, screen(m), "line 100")
}

// The run's summary leads with the reason when the run is not verified,
// and says an error equal to the reason once.
func TestSummaryLeadsWithTheReason(t *testing.T) {
	reason := "Check test failed with exit code 1."
	lines := runSummaryLines(report.Run{Status: "failed", Reason: reason, Error: reason, ChangedFiles: []string{"a.go"}}, shown{})
	if len(lines) < 3 || lines[1].text != "  reason  "+reason || lines[2].text != "  changed  a.go" {
		t.Errorf("summary = %+v, want the reason right after the head line, once", lines)
	}
	ok := runSummaryLines(report.Run{Status: "ok", Verified: true, Reason: "Every required check passed."}, shown{})
	for _, l := range ok {
		if strings.Contains(l.text, "reason") {
			t.Errorf("a verified run's summary shows %q", l.text)
		}
	}
}

// A run whose measured reviewer does not discriminate shows its warning
// next to the verdict, verified or not (doc/design.md §8.10).
func TestSummaryShowsTheReviewerNote(t *testing.T) {
	warning := "The reviewer's verdict carries little weight."
	for _, rep := range []report.Run{
		{Status: "ok", Verified: true, Reviewer: &report.ReviewerStanding{Warning: warning}},
		{Status: "failed", Reason: "The reviewer rejected the change.", Reviewer: &report.ReviewerStanding{Warning: warning}},
	} {
		lines := runSummaryLines(rep, shown{})
		found := false
		for _, l := range lines {
			found = found || l.text == "  note  "+warning
		}
		if !found {
			t.Errorf("%s run: summary = %+v, want the note", rep.Status, lines)
		}
	}
	for _, l := range runSummaryLines(report.Run{Status: "ok", Verified: true, Reviewer: &report.ReviewerStanding{Note: "not measured"}}, shown{}) {
		if strings.Contains(l.text, "note") {
			t.Errorf("a run without a warning shows %q", l.text)
		}
	}
}
