package agent

import (
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

// TestReviewerReadsTheChecks: the reviewer's message tells in words what
// failed before the change, with the end of its output, how the checks end
// after it, and what shows the change (doc/design.md §6.10), not the
// verification as one JSON object. Given that object, a 1.5B reviewer
// answered that the test the task names was "still failing" after the
// change had fixed it.
func TestReviewerReadsTheChecks(t *testing.T) {
	lint := shCheck("lint", config.KindLint, []string{"go"}, "true")
	for _, tc := range []struct {
		name     string
		test     string
		coder    []step
		evidence string
		want     []string
	}{
		{
			name: "a failing test fixed",
			test: `if grep -q broken a.go; then echo "--- FAIL: TestA: a.go is still broken"; exit 1; fi`,
			coder: []step{
				do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
			},
			evidence: report.EvidenceFixed,
			want: []string{
				"\nChecks run by the host:\nBefore the change:\nCheck `test` (required, test): failed, exit code 1. The end of its output:\n```\n--- FAIL: TestA: a.go is still broken\n```\n",
				"\nAfter the change: every check passes: lint, test.\n`test` failed before the change and passes now.\n",
				"Static analysis covers the changed files: a.go (lint).\n",
			},
		},
		{
			name: "a new test that fails on the old code",
			test: `if [ -f a_test.go ] && grep -q broken a.go; then echo "--- FAIL: TestA"; exit 1; fi`,
			coder: []step{
				do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"}),
					tc("c2", "file_write", map[string]any{"path": "a_test.go", "content": "package a\n"})),
			},
			evidence: report.EvidenceFailThenPass,
			want: []string{
				"\nChecks run by the host:\nBefore the change, every required check passed.\n",
				"\nAfter the change: every check passes: lint, test.\nThe tests this run added or changed (a_test.go) fail on the code as it was before the change and pass on the new code.\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, lint, shCheck("test", config.KindTest, []string{"go"}, tc.test))
			steps := append([]step{say("1. Fix a.go.")}, tc.coder...)
			steps = append(steps, say("Fixed a.go."), say(verdict(true, "does the task")))
			be := newScripted(t, steps...)
			rep := newHarness(t, cfg, be).run(t, "fix a.go")
			if !rep.Verified || rep.Verification.Evidence != tc.evidence {
				t.Fatalf("Run() = %s verified=%v evidence %q (reason %q), want verified by %s", rep.Status, rep.Verified, rep.Verification.Evidence, rep.Reason, tc.evidence)
			}
			reqs := be.requests()
			user := reqs[len(reqs)-1].Messages[1].Content
			if !strings.Contains(user, "Your role now: the reviewer.") {
				t.Fatalf("the last request is not the reviewer's:\n%s", user)
			}
			for _, want := range tc.want {
				if !strings.Contains(user, want) {
					t.Errorf("reviewer's message lacks %q:\n%s", want, user)
				}
			}
			for _, not := range []string{`"verified"`, `"passed_checks"`} {
				if strings.Contains(user, not) {
					t.Errorf("reviewer's message holds %s, want the checks in words:\n%s", not, user)
				}
			}
		})
	}
}

// TestReviewChecksText: the sentences of the other cases — no baseline
// taken, an optional check failing after the change, a task declared
// behaviour preserving.
func TestReviewChecksText(t *testing.T) {
	rc := 1
	v := report.Verification{
		Status: report.StatusOK, Verified: true, Evidence: report.EvidenceBehaviourPreserving,
		Checks: []report.CheckResult{
			{Name: "test", Status: report.StatusOK, Required: true, Kind: config.KindTest},
			{Name: "style", Status: report.StatusFailed, Kind: config.KindLint, Returncode: &rc, Stdout: "a.go:1: line too long"},
		},
	}
	for _, tc := range []struct {
		name     string
		baseline []report.CheckResult
		want     string
	}{
		{"no baseline", nil, "\nAfter the change:\nCheck `style` (optional, lint): failed, exit code 1. The end of its output:\n```\na.go:1: line too long\n```\n" +
			"Checks that pass: test.\nThe operator declared that this task changes no behaviour: nothing that passed before fails now.\n"},
		{"a passing baseline", []report.CheckResult{{Name: "test", Status: report.StatusOK, Required: true}}, "Before the change, every required check passed.\n\nAfter the change:\nCheck `style`"},
	} {
		got := newReviewChecks(v, tc.baseline, levels[0]).promptText()
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: text = %q, want it to hold %q", tc.name, got, tc.want)
		}
		if tc.baseline == nil && strings.Contains(got, "Before the change") {
			t.Errorf("%s: text = %q, want nothing said of a baseline that was not taken", tc.name, got)
		}
	}
}
