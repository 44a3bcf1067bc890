package agent

import (
	"slices"
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

// TestBriefHandsPlannerTheFailureAndTheFiles: the planner's one message
// holds the task, the baseline's failing check output, the source map and
// the current text of the file the failure points at, so that it can plan
// without a navigation turn.
func TestBriefHandsPlannerTheFailureAndTheFiles(t *testing.T) {
	dir := workspace(t, map[string]string{
		"calc/calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n",
		"notes/other.go":    "package notes\n\nfunc Unrelated() {}\n",
	})
	test := shCheck("unit", config.KindTest, []string{"go"}, "echo 'calc_test.go:7: Add(1, 2) = -1, want 3'; exit 1")
	be := newScripted(t, say("1. Fix Add in calc/calc.go."), say("Nothing to do."), say(verdict(false, "no change")))
	h := newHarness(t, testConfig(dir, test), be)
	h.run(t, "make the tests pass")

	user := be.requests()[0].Messages[1].Content
	for _, want := range []string{
		"Task:\nmake the tests pass\n",
		"Failing checks before any change (run by the host):\nCheck `unit` (required, test): failed, exit code 1. The end of its output:\n```\ncalc_test.go:7: Add(1, 2) = -1, want 3\n```\n",
		"calc/calc.go: Add\n",
		"calc/calc_test.go: TestAdd\n",
		"calc/calc_test.go (as the run found it):\n```go\npackage calc\n",
		"calc/calc.go (as the run found it):\n```go\npackage calc\n\nfunc Add(a, b int) int { return a - b }\n```\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("planner message lacks %q:\n%s", want, user)
		}
	}
	// The file the failure names comes before its source partner, and both
	// before the unrelated file.
	iTest, iSrc, iOther := strings.Index(user, "calc/calc_test.go (as the run"), strings.Index(user, "calc/calc.go (as the run"), strings.Index(user, "notes/other.go (as the run")
	if iTest >= iSrc || (iOther >= 0 && iOther < iSrc) {
		t.Errorf("file order: test %d, source %d, other %d; want the failing test, its source, then the rest", iTest, iSrc, iOther)
	}
	coder := be.requests()[1].Messages[1].Content
	if !strings.Contains(coder, "Plan (written before any change):\n1. Fix Add in calc/calc.go.\n") || !strings.Contains(coder, "calc_test.go:7: Add(1, 2)") {
		t.Errorf("coder message lacks the plan or the failure:\n%s", coder)
	}
}

// TestCheckOutputAsText: a failing check's output is shown as its lines
// in a fence that its own backquotes cannot close; a check without output
// shows its error.
func TestCheckOutputAsText(t *testing.T) {
	rc := 2
	l := checkList{
		{Name: "md", Status: "failed", Required: true, Kind: "lint", Returncode: &rc, StdoutTail: "a.md:1: ```go", StderrTail: "1 problem\n"},
		{Name: "slow", Status: "timeout", Error: "Check exceeded 10s"},
	}
	want := "Check `md` (required, lint): failed, exit code 2. The end of its output:\n````\na.md:1: ```go\n1 problem\n````\n" +
		"Check `slow` (optional): timeout: Check exceeded 10s.\n"
	if got := l.promptText(); got != want {
		t.Errorf("promptText() =\n%s\nwant\n%s", got, want)
	}
}

// TestBriefStaysWithinItsBudget: files that do not fit are named, not
// shown, and agent.brief_chars = 0 hands no brief at all.
func TestBriefStaysWithinItsBudget(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+".py"] = "def " + n + "():\n    return '" + strings.Repeat(n, 900) + "'\n"
	}
	dir := workspace(t, files)
	cfg := testConfig(dir)
	cfg.Trusted = false
	cfg.Agent.BriefChars = 2500
	be := newScripted(t, say("plan"))
	newHarness(t, cfg, be).run(t, "look at b.py")
	user := be.requests()[0].Messages[1].Content
	_, brief, _ := strings.Cut(user, "Source files")
	brief, _, _ = strings.Cut(brief, roleSeparator)
	if n := len("Source files" + brief); n > cfg.Agent.BriefChars {
		t.Errorf("brief = %d characters, want at most %d", n, cfg.Agent.BriefChars)
	}
	if !strings.Contains(user, "b.py (as the run found it)") || !strings.Contains(user, "a.py: a\n") {
		t.Errorf("brief lacks the named file's text or the map:\n%s", user)
	}
	if !strings.Contains(user, "Not shown (read with file_read when needed): ") {
		t.Errorf("brief does not name the files it left out:\n%s", user)
	}

	cfg.Agent.BriefChars = 0
	be = newScripted(t, say("plan"))
	newHarness(t, cfg, be).run(t, "look at b.py")
	if user := be.requests()[0].Messages[1].Content; strings.Contains(user, "Source files") || !strings.HasPrefix(user, "Task:\nlook at b.py\n"+roleSeparator) {
		t.Errorf("brief_chars = 0: message = %q, want the task alone before the role's part", user)
	}
}

// TestCoderAnsweringWithCodeIsToldOnce: a coder that answers with a code
// block the host cannot apply, and no edit, gets one reminder; when it then edits, the run
// verifies; a coder that never edits does not verify, however much the
// reviewer approves.
func TestCoderAnsweringWithCodeIsToldOnce(t *testing.T) {
	// Code no file of the workspace can take (answercode_test.go has the
	// code that is applied).
	code := "Here is the fix:\n```python\nfixed = True\n```"
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be := newScripted(t,
		say("1. Fix a.go."),
		say(code),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		say(verdict(true, "ok")),
	)
	rep := newHarness(t, testConfig(dir, goLint()), be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() = %s verified=%v (%s), want ok after the reminder", rep.Status, rep.Verified, rep.Reason)
	}
	third := be.requests()[2].Messages
	if last := third[len(third)-1]; last.Role != "user" || last.Content != noChangeMessage(policy{answerCode: true}, []string{"lint"})+"\n\nNow: do this task:\nfix a.go" {
		t.Errorf("coder's second call ends with %q, want the reminder", last.Content)
	}

	// A coder that only says what it changed is told the same.
	dir = workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be = newScripted(t,
		say("1. Fix a.go."),
		say("I changed a.go so that it says fixed."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		say(verdict(true, "ok")),
	)
	rep = newHarness(t, testConfig(dir, goLint()), be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified || be.left() != 0 {
		t.Fatalf("claim without an edit: Run() = %s verified=%v (%s), %d replies left; want ok after the reminder", rep.Status, rep.Verified, rep.Reason, be.left())
	}

	// A coder that never edits does not verify, and no reviewer is asked
	// about an empty change.
	dir = workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be = newScripted(t, say("1. Fix a.go."), say(code), say(code))
	rep = newHarness(t, testConfig(dir, goLint()), be).run(t, "fix a.go")
	if rep.Verified || rep.Status == report.StatusOK || !strings.Contains(rep.Reason, "made no change") {
		t.Errorf("coder that never edited: %s verified=%v (%q), want not verified naming the missing change", rep.Status, rep.Verified, rep.Reason)
	}
	if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:ok"}) || be.left() != 0 {
		t.Errorf("roles %v, %d scripted replies left; want the reminder used once and no reviewer", got, be.left())
	}
}

// TestSameFailingCallThreeTurnsEndsTheRole: a model that keeps making a
// failing call is stopped at its third failure instead of spending its
// remaining turns, with a reason that says so.
func TestSameFailingCallThreeTurnsEndsTheRole(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	bad := tc("c", "file_edit", map[string]any{"path": "a.go", "old_string": "absent text", "new_string": "x"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxIterations = 6
	be := newScripted(t, say("1. Fix a.go."), do(bad), do(bad), do(bad))
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	coder := rep.Roles[1]
	if coder.Status != report.StatusUnverified || coder.Error != MsgStuck || coder.Turns != 3 {
		t.Fatalf("coder = %s %q after %d turns, want unverified %q after 3", coder.Status, coder.Error, coder.Turns, MsgStuck)
	}
	if be.left() != 0 || !strings.Contains(rep.Reason, "kept making the same failing tool calls") {
		t.Errorf("reason %q, %d replies left; want the stuck reason and no reviewer (nothing changed)", rep.Reason, be.left())
	}

	// Two failing calls in turn (which the previous-turn repeat answer
	// does not catch) stop at the third failure of one of them; a call
	// that fails twice between successes does not.
	other := tc("d", "file_read", map[string]any{"path": "missing.go"})
	read := tc("r", "file_read", map[string]any{"path": "a.go"})
	be = newScripted(t, say("1. Fix a.go."), do(bad), do(other), do(bad), do(other), do(bad))
	rep = newHarness(t, cfg, be).run(t, "fix a.go")
	if coder := rep.Roles[1]; coder.Error != MsgStuck || coder.Turns != 5 {
		t.Errorf("alternating failures: coder %q after %d turns, want %q after 5", coder.Error, coder.Turns, MsgStuck)
	}
	cfg.Agent.MaxIterations = 8
	be = newScripted(t, say("1. Fix a.go."), do(bad), do(read), do(bad), do(read), do(read), say("gave up"), say("still no change"))
	rep = newHarness(t, cfg, be).run(t, "fix a.go")
	if coder := rep.Roles[1]; coder.Error == MsgStuck || be.left() != 0 {
		t.Errorf("a call that failed twice among successes: coder %q after %d turns, %d replies left; want it to finish", coder.Error, coder.Turns, be.left())
	}
}
