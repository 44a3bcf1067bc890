package agent

import (
	"slices"
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/progress"
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

// TestPlanCodeIsNotHandedOn: the coder gets the plan's steps without its
// code blocks, the reviewer no plan at all (it judges the change against
// the task); a read-only run's summary keeps the whole plan.
func TestPlanCodeIsNotHandedOn(t *testing.T) {
	plan := "1. a.go: say fixed.\n```go\npackage a // PLANNED-CODE\n```"
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
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
	if user := reqs[1].Messages[1].Content; strings.Contains(user, "PLANNED-CODE") || !strings.Contains(user, "1. a.go: say fixed.\n"+planCodeLeftOut) {
		t.Errorf("coder's message has the plan's code, or not its steps:\n%s", user)
	}
	if user := reqs[3].Messages[1].Content; strings.Contains(user, "PLANNED-CODE") || strings.Contains(user, "say fixed") {
		t.Errorf("reviewer's message has the plan:\n%s", user)
	}

	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
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
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
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

// TestPlannerSkippedWhenBriefHoldsEveryFile: with agent.planner = "auto" a
// trusted run whose brief holds every source file starts with the coder,
// records the planner as skipped with the reason, and can verify; a
// workspace too big for the brief, a read-only run and "always" plan.
func TestPlannerSkippedWhenBriefHoldsEveryFile(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.Planner = config.PlannerAuto
	be := newScripted(t,
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		say(verdict(true, "ok")),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v (%s), %d replies left; want ok without a planner call", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	if got := strings.Join(roleStatuses(rep), " "); got != "planner:skipped coder:ok reviewer:ok" {
		t.Errorf("roles = %s, want the planner skipped", got)
	}
	if p := rep.Roles[0]; p.Summary != msgPlannerSkipped || p.Turns != 0 {
		t.Errorf("planner = %+v, want the skip reason and no turns", p)
	}
	first := be.requests()[0]
	if user := first.Messages[1].Content; !strings.Contains(user, "Your role now: the coder") || strings.Contains(user, "Plan (") {
		t.Errorf("first call is not the coder's, or has a plan section:\n%s", first.Messages[1].Content)
	}
	var skipped []progress.Event
	h.mu.Lock()
	events := slices.Clone(h.events)
	h.mu.Unlock()
	for _, e := range events {
		if e.Kind == progress.RoleEnd && e.Role == config.RolePlanner {
			skipped = append(skipped, e)
		}
	}
	if len(skipped) != 1 || skipped[0].Status != report.StatusSkipped || skipped[0].Message != msgPlannerSkipped {
		t.Errorf("planner events = %+v, want one role_end skipped with the reason", skipped)
	}

	plans := func(name string, cfg *config.Config, steps ...step) {
		t.Helper()
		be := newScripted(t, steps...)
		rep := newHarness(t, cfg, be).run(t, "fix a.go")
		if len(rep.Roles) == 0 || rep.Roles[0].Role != config.RolePlanner || rep.Roles[0].Status != report.StatusOK || be.left() != 0 {
			t.Errorf("%s: roles %v, %d replies left; want the planner to run", name, roleStatuses(rep), be.left())
		}
	}
	edit := do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"}))
	big := workspace(t, map[string]string{"a.go": "package a; var broken int\n", "b.go": "package a\n\n// " + strings.Repeat("x", 900) + "\n"})
	small := testConfig(big, goLint())
	small.Agent.Planner, small.Agent.BriefChars = config.PlannerAuto, 600
	plans("a file not in the brief", small, say("1. Fix a.go."), edit, say("Edited."), say(verdict(true, "ok")))

	ro := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
	ro.Agent.Planner, ro.Trusted = config.PlannerAuto, false
	plans("read-only run", ro, say("1. Fix a.go."))

	always := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
	plans("always", always, say("1. Fix a.go."), edit, say("Edited."), say(verdict(true, "ok")))
}
