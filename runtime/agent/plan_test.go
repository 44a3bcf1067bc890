package agent

import (
	"strings"
	"testing"

	"flow/runtime/report"
)

func TestWithoutCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1. Fix `f` in a.go.", "1. Fix `f` in a.go."},
		{"1. Fix a.go.\nHere is the code:\n```go\npackage a\n```\n2. Run the tests.",
			"1. Fix a.go.\nHere is the code:\n" + planCodeLeftOut + "\n2. Run the tests."},
		{"1. a\n```\nx\n```\n```py\ny\n```\n", "1. a\n" + planCodeLeftOut + "\n" + planCodeLeftOut},
		{"1. a\n  ```python\n  x = 1\n", "1. a\n" + planCodeLeftOut}, // unclosed, indented fence
	} {
		if got := withoutCode(c.in); got != c.want {
			t.Errorf("withoutCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPlanCodeIsNotHandedOn: the coder and the reviewer get the plan's steps
// without its code blocks; a read-only run's summary keeps the whole plan.
func TestPlanCodeIsNotHandedOn(t *testing.T) {
	plan := "1. a.go: say fixed.\n```go\npackage a // PLANNED-CODE\n```"
	dir := workspace(t, map[string]string{"a.go": "package a // broken\n"})
	be := newScripted(t,
		say(plan),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		say(verdict(true, "ok")),
	)
	rep := newHarness(t, testConfig(dir, goLint()), be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() = %s verified=%v (%s), want ok", rep.Status, rep.Verified, rep.Reason)
	}
	reqs := be.requests()
	for i, who := range map[int]string{1: "coder", 3: "reviewer"} {
		user := reqs[i].Messages[1].Content
		if strings.Contains(user, "PLANNED-CODE") || !strings.Contains(user, "1. a.go: say fixed.\n"+planCodeLeftOut) {
			t.Errorf("%s's message has the plan's code, or not its steps:\n%s", who, user)
		}
	}

	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a // broken\n"}), goLint())
	cfg.Trusted = false
	rep = newHarness(t, cfg, newScripted(t, say(plan))).run(t, "fix a.go")
	if rep.Summary != plan {
		t.Errorf("read-only summary = %q, want the whole plan %q", rep.Summary, plan)
	}
}

// TestRepairAfterNoChange: a cycle that changed nothing asks no reviewer,
// and the repair coder is told that no file changed instead of being shown
// the previous coder's claim.
func TestRepairAfterNoChange(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a // broken\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	claim := "I changed a.go to say CLAIMED-FIX."
	be := newScripted(t,
		say("1. Fix a.go."),
		say(claim), say(claim), // the reminder, then the cycle ends unchanged
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		say(verdict(true, "ok")),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified || rep.Cycles != 2 || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v cycles %d (%s), %d replies left; want ok in cycle 2", rep.Status, rep.Verified, rep.Cycles, rep.Reason, be.left())
	}
	if got := strings.Join(roleStatuses(rep), " "); got != "planner:ok coder:ok coder:ok reviewer:ok" {
		t.Errorf("roles = %s, want no reviewer in the unchanged cycle", got)
	}
	user := be.requests()[3].Messages[1].Content
	if !strings.Contains(user, repairNoChange) || strings.Contains(user, "CLAIMED-FIX") {
		t.Errorf("repair coder's message lacks the no-change instruction or repeats the claim:\n%s", user)
	}
}
