package agent

import (
	"fmt"
	"strings"
	"testing"

	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/verify"
	"flow/runtime/verify/weakening"
)

// TestBaselineRunsBeforeTheFirstEdit: the required checks run once, in the
// baseline phase, before the planner starts, and the verification compares
// with them.
func TestBaselineRunsBeforeTheFirstEdit(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be := newScripted(t, editScript(verdict(true, "ok"))...)
	h := newHarness(t, testConfig(dir, goLint()), be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK {
		t.Fatalf("Run() status = %s (%s %s), want ok", rep.Status, rep.Reason, rep.Error)
	}
	if len(rep.Baseline) != 1 || rep.Baseline[0].Name != "lint" || rep.Baseline[0].Status != report.StatusFailed {
		t.Fatalf("Baseline = %+v, want lint failing before the edit", rep.Baseline)
	}
	if c := rep.Checks[0]; c.Baseline != report.BaselineFixed || c.BaselineStatus != report.StatusFailed {
		t.Errorf("lint result baseline = %q (was %q), want fixed (was failed)", c.Baseline, c.BaselineStatus)
	}
	if !strings.Contains(rep.Verification.Baseline, "check lint was failing before this run and passes now (fixed)") {
		t.Errorf("verification baseline = %q, want lint named as fixed", rep.Verification.Baseline)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var order []string
	for _, e := range h.events {
		switch e.Kind {
		case progress.CheckStart:
			order = append(order, "check:"+e.Role)
		case progress.RoleStart:
			order = append(order, "role:"+e.Role)
		}
	}
	// The baseline comes before the planner, which sees its failures.
	want := "check:baseline role:planner role:coder check:verification role:reviewer"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

func TestBaselineOffAndUntrusted(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.Baseline = false
	rep := newHarness(t, cfg, newScripted(t, editScript(verdict(true, "ok"))...)).run(t, "fix a.go")
	// Without a baseline no check can show the fix, and the run adds no
	// test: it is not verified, and says why.
	if rep.Status != report.StatusUnverified || rep.Baseline != nil || rep.Checks[0].Baseline != "" ||
		!rep.Verification.NoEvidence || !strings.Contains(rep.Reason, "agent.baseline = false") {
		t.Errorf("with agent.baseline = false: status %s (%q), baseline %+v, check baseline %q; want unverified for want of evidence, and no baseline",
			rep.Status, rep.Reason, rep.Baseline, rep.Checks[0].Baseline)
	}
	cfg = testConfig(dir, goLint())
	cfg.Trusted = false
	rep = newHarness(t, cfg, newScripted(t, say("plan"))).run(t, "fix a.go")
	if rep.Baseline != nil {
		t.Errorf("read-only run measured a baseline: %+v", rep.Baseline)
	}
}

// TestReviewerSeesTestChanges: the reviewer's context lists the test file's
// diff apart from the code, as text (not JSON), with the weakening found in it (excused here:
// test edits are allowed and the changed test fails on the old code, so
// the host's verification passes and the reviewer is asked).
func TestReviewerSeesTestChanges(t *testing.T) {
	dir := workspace(t, map[string]string{
		"a.go":      "package a; var broken int\n",
		"a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(\"A\")\n\t}\n}\n",
	})
	be := newScripted(t,
		say("plan"),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		do(tc("c2", "file_edit", map[string]any{"path": "a_test.go", "old_string": "A() != 1", "new_string": "A() != 2"})),
		say("done"),
		say(verdict(true, "ok")),
	)
	cfg := testConfig(dir, goLint())
	cfg.Verify.AllowTestEdits = true
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK || len(rep.Verification.Weakening) != 1 || !rep.Verification.Weakening[0].Excused {
		t.Fatalf("Run() = %s (%q), weakening %+v; want ok with the test edit excused", rep.Status, rep.Reason, rep.Verification.Weakening)
	}
	reqs := be.requests()
	ctx := reqs[len(reqs)-1].Messages[1].Content
	for _, want := range []string{
		"\nChanges to tests and check definitions:\na_test.go (test, modified): the host found it weakened: ",
		"a value in an existing test line changed on line 6 (1 → 2)",
		". Its diff:\n```\n--- a/a_test.go\n+++ b/a_test.go\n",
		"\n-\tif A() != 1 {\n+\tif A() != 2 {\n",
	} {
		if !strings.Contains(ctx, want) {
			t.Errorf("reviewer context lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Contains(ctx, "a.go (source") || strings.Contains(ctx, `"path":`) {
		t.Errorf("reviewer context lists the source a.go among test and check changes:\n%s", ctx)
	}
}

// TestGuardChangesStayBounded: however many test files changed, the
// reviewer's view of them stays within its budget and lists every finding.
func TestGuardChangesStayBounded(t *testing.T) {
	var edits []verify.Edit
	big := strings.Repeat("x := 1\n", 2000)
	for i := range 30 {
		edits = append(edits, verify.Edit{
			Path: fmt.Sprintf("t%02d_test.go", i), Kind: weakening.KindTest, Known: true, Existed: true, Exists: true,
			Before: []byte(big), After: []byte(strings.ReplaceAll(big, "1", "2")),
			Findings: []weakening.Finding{{Detail: fmt.Sprintf("t%02d_test.go: weakened", i)}},
		})
	}
	edits = append(edits, verify.Edit{Path: "a.go", Kind: weakening.KindSource, Known: true})
	got := guardChanges(edits)
	if len(got) != maxGuardFiles {
		t.Errorf("files listed = %d, want %d", len(got), maxGuardFiles)
	}
	total := 0
	for _, c := range got {
		total += len(c.Diff)
		if len(c.Weakening) != 1 || c.Path == "a.go" {
			t.Errorf("entry %s: weakening %v, want its one finding (and no source file)", c.Path, c.Weakening)
		}
	}
	if total > maxGuardTotal+maxGuardFiles*100 {
		t.Errorf("diff text = %d characters, want at most about %d", total, maxGuardTotal)
	}
	if !got[len(got)-1].Truncated {
		t.Errorf("the last diff is not marked truncated")
	}
}
