package agent

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

// TestFailedCheckFeedsBoundedRepair: a cycle whose check failed goes to
// repair without a reviewer call, and the repair coder gets the failure's
// tail within its budget.
func TestFailedCheckFeedsBoundedRepair(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	// The test check prints a lot, ends with a marker, and exits 3 until
	// a.go is fixed.
	script := `if grep -q fixed a.go; then exit 0; fi; i=0; while [ $i -lt 400 ]; do echo "noise line $i of the test output"; i=$((i+1)); done; echo "FAIL: TestA wanted fixed (marker-tail)"; exit 3`
	cfg := testConfig(dir, goLint(), shCheck("tests", config.KindTest, []string{"go"}, script))
	cfg.Agent.MaxCycles = 2
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "half"})),
		say("Changed broken to half."),
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "half", "new_string": "fixed"})),
		say("Now it says fixed."),
		say(verdict(true, "good")),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")

	if rep.Status != report.StatusOK || !rep.Verified || rep.Cycles != 2 {
		t.Fatalf("Run() = %s verified=%v cycles %d (reason %q), want ok verified after 2 cycles", rep.Status, rep.Verified, rep.Cycles, rep.Reason)
	}
	var hist []string
	for _, v := range rep.VerificationHistory {
		hist = append(hist, v.Status)
	}
	if !slices.Equal(hist, []string{"failed", "ok"}) {
		t.Errorf("verification history = %v, want [failed ok]", hist)
	}
	if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:ok", "reviewer:skipped", "coder:ok", "reviewer:ok"}) {
		t.Errorf("roles = %v, want the planner once, then two cycles, the first without a reviewer", got)
	}

	reqs := be.requests()
	second := reqs[3] // planner, coder×2, then the repair coder
	if second.Model != cfg.ModelFor(config.RoleCoder) || second.Messages[1].Role != model.RoleUser {
		t.Fatalf("request 3 is not the repair coder's first call")
	}
	user := second.Messages[1].Content
	// The check's output is shown as its lines, in a fence, not as a JSON
	// string of escapes.
	for _, want := range []string{"Check `tests` (required, test): failed, exit code 3. The end of its output:\n```\n", "\nFAIL: TestA wanted fixed (marker-tail)\n```\n", "1. Fix a.go."} {
		if !strings.Contains(user, want) {
			t.Errorf("repair coder's user message lacks %q:\n%s", want, user)
		}
	}
	// The last coder's account is not handed on: the file and the check
	// say what it did.
	if strings.Contains(user, "Changed broken to half.") {
		t.Errorf("repair coder's message repeats the last coder's account:\n%s", user)
	}
	if strings.Contains(user, "The reviewer ") {
		t.Errorf("repair coder's message has a review of a cycle no reviewer saw:\n%s", user)
	}
	_, section, ok := strings.Cut(user, "\nWhat failed in the last cycle:\n")
	if !ok {
		t.Fatalf("user message has no repair section:\n%s", user)
	}
	repair, _, _ := strings.Cut(section, "\nCurrent content of the files")
	if n := len([]rune(repair)); n > maxRepairChars {
		t.Errorf("repair summary = %d characters, want at most %d", n, maxRepairChars)
	}
	if strings.Contains(user, "noise line 0 ") {
		t.Errorf("repair summary carries the head of the output, want only its tail")
	}
}

// TestNoChangeReminderNamesTheFailingCheck: a repair coder that answers
// that the task is already done, while the check that failed in the last
// cycle still fails, is told that check still fails and the task is not
// done, without the way out of saying no change is needed; with every
// required check passing, the reminder keeps it.
func TestNoChangeReminderNamesTheFailingCheck(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	cfg.Agent.AnswerCode = false
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "half"})),
		say("Changed broken to half; the checks pass."),
		say("The task is already done. No changes are needed."),
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "half", "new_string": "fixed"})),
		say("Now it says fixed."),
		say(verdict(true, "good")),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if !rep.Verified || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v (%s), %d replies left; want verified after the reminder", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	msgs := be.requests()[4].Messages // planner, coder×2, repair coder×2
	// In a repair cycle the reminder ends with what the cycle asks for.
	if last := msgs[len(msgs)-1].Content; last != noChangeMessage(policy{}, []string{"lint"})+"\n\nNow: "+nowRepair || strings.Contains(last, "no further change") {
		t.Errorf("repair coder's reminder = %q, want it to name the failing check, leave no way out and end with what to do now", last)
	}

	// Every required check passes: the reminder keeps the way out.
	dir = workspace(t, map[string]string{"a.go": "package a\n\nvar fixed int\n"})
	cfg = testConfig(dir, goLint())
	cfg.Agent.AnswerCode = false
	be = newScripted(t, say("1. Rename fixed."), say("Renamed it."), say("It needs no change."))
	newHarness(t, cfg, be).run(t, "rename fixed in a.go to done")
	msgs = be.requests()[2].Messages
	if last := msgs[len(msgs)-1].Content; last != msgNoChange+"\n\nNow: do this task:\nrename fixed in a.go to done" {
		t.Errorf("reminder with passing checks = %q, want %q", last, msgNoChange)
	}
}

// TestRejectionFeedsRepair: a change the host verified and the reviewer
// rejected goes to repair with the reviewer's issues.
func TestRejectionFeedsRepair(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 2
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Changed broken to fixed."),
		say(verdict(false, "not general", "a.go must also export it (needs-fix-issue)")),
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "var fixed", "new_string": "var Fixed, fixed"})),
		say("Exported it."),
		say(verdict(true, "good")),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if rep.Status != report.StatusOK || !rep.Verified || rep.Cycles != 2 {
		t.Fatalf("Run() = %s verified=%v cycles %d (reason %q), want ok verified after 2 cycles", rep.Status, rep.Verified, rep.Cycles, rep.Reason)
	}
	if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:ok", "reviewer:ok", "coder:ok", "reviewer:ok"}) {
		t.Errorf("roles = %v, want the planner once, then two reviewed cycles", got)
	}
	user := be.requests()[4].Messages[1].Content
	for _, want := range []string{"The reviewer rejected the change: not general\n- a.go must also export it (needs-fix-issue)\n"} {
		if !strings.Contains(user, want) {
			t.Errorf("repair coder's user message lacks %q:\n%s", want, user)
		}
	}
}

// A repair that leaves the files exactly as the reviewer rejected them is
// not reviewed again: the rejection stands and the run stops
// (doc/design.md §6.8). The 1.5B coder gave a rejected change back as it
// was, and every further cycle cost a coder and a reviewer call.
func TestRejectedChangeNotReviewedAgain(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxCycles = 3
	be := newScripted(t,
		say("1. Fix a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Changed broken to fixed."),
		say(verdict(false, "not general", "uses a global")),
		// The repair writes the file twice and ends where it began.
		do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "var fixed", "new_string": "var other"})),
		do(tc("c3", "file_edit", map[string]any{"path": "a.go", "old_string": "var other", "new_string": "var fixed"})),
		say("The change is right as it is."),
	)
	rep := newHarness(t, cfg, be).run(t, "fix a.go")
	if n := len(be.requests()); n != 7 {
		t.Errorf("model calls = %d, want 7 (no second review, no third cycle)", n)
	}
	if rep.Status != report.StatusFailed || rep.Verified || rep.Cycles != 2 {
		t.Errorf("Run() = %s verified=%v cycles %d, want failed, not verified, after 2 cycles", rep.Status, rep.Verified, rep.Cycles)
	}
	if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:ok", "reviewer:ok", "coder:ok", "reviewer:skipped"}) {
		t.Errorf("roles = %v, want the second review skipped", got)
	}
	if s := rep.Roles[4].Summary; !strings.Contains(s, "rejected them in cycle 1") {
		t.Errorf("skipped reviewer's summary = %q, want the cycle of the rejection", s)
	}
	want := "The repair left the files as they were when the reviewer rejected them in cycle 1, so the run stopped: " +
		"the reviewer rejected the change: uses a global; read the diff, and run again with a task that says more if the change is wrong"
	if rep.Reason != want {
		t.Errorf("Reason = %q\nwant     %q", rep.Reason, want)
	}
	if !rep.Verification.Verified || len(rep.VerificationHistory) != 2 {
		t.Errorf("verification = %+v (%d cycles), want the checks passing, checked in both cycles", rep.Verification, len(rep.VerificationHistory))
	}
}

// A repair that changes the rejected files is reviewed again, and one that
// comes back to a state rejected two cycles earlier is not. The run then
// fails with a gate reviewer and stays unverified with an advisory one.
func TestRejectedStatesRemembered(t *testing.T) {
	for _, mode := range []struct{ reviewer, status string }{
		{config.ReviewerGate, report.StatusFailed},
		{"", report.StatusFailed},
		{config.ReviewerAdvisory, report.StatusUnverified},
	} {
		t.Run("reviewer="+mode.reviewer, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			cfg := testConfig(dir, goLint())
			cfg.Agent.MaxCycles = 4
			cfg.Verify.Reviewer = mode.reviewer
			be := newScripted(t,
				say("1. Fix a.go."),
				do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
				say("Changed broken to fixed."),
				say(verdict(false, "not general", "first")),
				do(tc("c2", "file_edit", map[string]any{"path": "a.go", "old_string": "var fixed", "new_string": "var fixedOther"})),
				say("Renamed it."),
				say(verdict(false, "worse", "second")),
				do(tc("c3", "file_edit", map[string]any{"path": "a.go", "old_string": "var fixedOther", "new_string": "var fixed"})),
				say("Back to the first."),
			)
			rep := newHarness(t, cfg, be).run(t, "fix a.go")
			if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:ok", "reviewer:ok", "coder:ok", "reviewer:ok", "coder:ok", "reviewer:skipped"}) {
				t.Errorf("roles = %v, want two reviews, then the first state's rejection standing", got)
			}
			if rep.Status != mode.status || rep.Cycles != 3 || !strings.Contains(rep.Reason, "in cycle 1, so the run stopped: the reviewer rejected the change: first;") {
				t.Errorf("Run() = %s after %d cycles, reason %q; want %s after 3, citing cycle 1's rejection", rep.Status, rep.Cycles, rep.Reason, mode.status)
			}
			if advisory := strings.Contains(rep.Reason, "the reviewer is advisory"); advisory != (mode.reviewer == config.ReviewerAdvisory) {
				t.Errorf("reason %q: says advisory = %v, want %v", rep.Reason, advisory, !advisory)
			}
		})
	}
}

func TestRepairContextIsBounded(t *testing.T) {
	big := strings.Repeat("x\"\\\n\x01", 16000/5)
	rc := 2
	var checks []report.CheckResult
	for i := range 32 {
		checks = append(checks, report.CheckResult{
			Name: "check" + strconv.Itoa(i), Status: "failed", Required: i%2 == 0, Returncode: &rc,
			Stdout: big, Stderr: big,
		})
	}
	var cov []report.Coverage
	for i := range 300 {
		cov = append(cov, report.Coverage{Path: strings.Repeat("d/", 400) + strconv.Itoa(i) + ".go", Language: "go", Status: "unverified"})
	}
	var issues []string
	for range 100 {
		issues = append(issues, strings.Repeat("issue ", 500))
	}
	o := cycleOutcome{
		coder:        outcome{Role: report.Role{Role: "coder", Status: "ok", Summary: strings.Repeat("s", 16000)}},
		reviewer:     outcome{Role: report.Role{Role: "reviewer", Status: "ok", Approved: ptr(false), Summary: big, Issues: issues}},
		verification: report.Verification{Status: "failed", Reason: big, Checks: checks, Coverage: cov},
	}
	ctx := repairContext("the task", "the plan", o, false, nil)
	b, err := report.Marshal(ctx["repair"])
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(string(b))); n > maxRepairChars {
		t.Errorf("repair summary = %d characters, want at most %d", n, maxRepairChars)
	}
	// The message shows its text, which the JSON bound bounds too.
	if n := len([]rune(ctx["repair"].(repairSummary).promptText())); n > maxRepairChars {
		t.Errorf("repair summary's text = %d characters, want at most %d", n, maxRepairChars)
	}
	if ctx["plan"] != "the plan" {
		t.Errorf("repair context plan = %v, want the plan", ctx["plan"])
	}
	rv := reviewerContext(o, checks)
	b, _ = report.Marshal(rv["verification"])
	if n := len([]rune(string(b))); n > maxReviewerEvidence {
		t.Errorf("reviewer evidence = %d characters, want at most %d", n, maxReviewerEvidence)
	}
	if n := len([]rune(rv["verification"].(texter).promptText())); n > maxReviewerEvidence {
		t.Errorf("reviewer evidence's text = %d characters, want at most %d", n, maxReviewerEvidence)
	}
	// The reviewer judges the change, not the coder's account of it.
	all, _ := report.Marshal(rv)
	for _, key := range []string{"plan", "implementation"} {
		if _, ok := rv[key]; ok {
			t.Errorf("reviewer context has %q, want the coder's account and plan left out", key)
		}
	}
	if strings.Contains(string(all), strings.Repeat("s", 100)) {
		t.Errorf("reviewer context holds the coder's summary")
	}
}

func TestRepairInstructionAsksForEvidence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     cycleOutcome
		whole bool
		want  string
	}{
		{"a failure", cycleOutcome{changed: []string{"a.go"}, verification: report.Verification{Status: "failed"}}, false, repairInstruction},
		{"no change", cycleOutcome{verification: report.Verification{Status: "unverified"}}, false, repairNoChange},
		{"no change, whole files", cycleOutcome{verification: report.Verification{Status: "unverified"}}, true, repairNoChangeWhole},
		{"no evidence", cycleOutcome{changed: []string{"a.go"}, verification: report.Verification{Status: "unverified", NoEvidence: true}}, false, repairEvidence},
	} {
		got := repairContext("", "", tc.o, tc.whole, nil)["repair"].(repairSummary).Instruction
		if got != tc.want {
			t.Errorf("%s: instruction = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRepairSummaryPutsRequiredFailuresFirst(t *testing.T) {
	rc := 1
	v := report.Verification{Status: "failed", Checks: []report.CheckResult{
		{Name: "opt", Status: "failed", Returncode: &rc},
		{Name: "ok", Status: "ok", Required: true},
		{Name: "req", Status: "timeout", Required: true, Error: "Check exceeded 10ms"},
	}}
	s := summariseVerification(v, levels[0], false)
	var names []string
	for _, c := range s.FailingChecks {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"req", "opt"}) || !slices.Equal(s.PassedChecks, []string{"ok"}) {
		t.Errorf("failing %v passed %v, want [req opt] and [ok]", names, s.PassedChecks)
	}
}

// TestEvidenceRequestNamesTheTestFile: when every check passed before the
// run and passes after it, the repair cycle asks for a test in the test
// file that goes with the changed file (the project's, else the one the
// language's convention names), and the coder's message ends with that
// request, after the instructions. Without the rule the request is
// generic and sits in the middle of the message.
func TestEvidenceRequestNamesTheTestFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"the project's test file", map[string]string{"a.go": valueGo, "a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n"}, "a_test.go"},
		{"no test file yet", map[string]string{"a.go": valueGo}, "a_test.go"},
		{"a test file in another folder is not it", map[string]string{"a.go": valueGo, "b/b_test.go": "package b\n"}, "a_test.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, tc.files)
			be := newScripted(t,
				say("1. Make Value return 2."),
				do(tc1("file_edit", map[string]any{"path": "a.go", "old_string": "return 1", "new_string": "return 2"})),
				say("Value returns 2."),
				say("The change is made."),
				say("It is made."),
			)
			// Both checks pass before the run and after it.
			cfg := testConfig(dir, shCheck("lint", config.KindLint, []string{"go"}, "true"), shCheck("test", config.KindTest, []string{"go"}, "true"))
			cfg.Agent.MaxCycles = 2
			h := newHarness(t, cfg, be)
			rep := h.run(t, "make Value in a.go return 2")
			if rep.Status != report.StatusUnverified || rep.Verified || be.left() != 0 {
				t.Fatalf("Run() = %s verified=%v (%s), %d left; want unverified for want of evidence", rep.Status, rep.Verified, rep.Reason, be.left())
			}
			reqs := be.requests()
			msgs := reqs[3].Messages
			user := msgs[len(msgs)-1].Content
			ask := "Add or extend a test in " + tc.want + " that fails on the code as it was before your change"
			if !strings.Contains(user, ask) {
				t.Errorf("repair message lacks %q:\n%s", ask, user)
			}
			end := "\nNow: add or extend a test in " + tc.want + " that fails on the code as it was before your change and passes now; keep your change.\n"
			if !strings.HasSuffix(user, end) {
				t.Errorf("repair message ends %q, want %q", user[max(0, len(user)-300):], end)
			}
			if first := reqs[1].Messages[1].Content; !strings.HasSuffix(first, "\nNow: do this task:\nmake Value in a.go return 2\n") {
				t.Errorf("the first cycle's coder message does not end with the task: %q", first[max(0, len(first)-200):])
			}
			// The reminder after an answer that changed nothing repeats it.
			msgs = reqs[4].Messages
			if last := msgs[len(msgs)-1].Content; !strings.HasSuffix(last, strings.TrimSuffix(end, "\n")) {
				t.Errorf("reminder = %q, want it to end with %q", last, end)
			}
		})
	}
}

func tc1(name string, args any) model.ToolCall { return tc("c1", name, args) }

// TestNowRestatesTheTask: the first cycle's coder message and the
// reviewer's end with a "Now:" line that repeats the task, after the
// role's instructions; a long task is referred to instead (doc/design.md
// §6.9).
func TestNowRestatesTheTask(t *testing.T) {
	long := "make Value in a.go return 2. " + strings.Repeat("Keep the comment as it is. ", 30)
	for _, task := range []string{"make Value in a.go return 2", long} {
		dir := workspace(t, map[string]string{"a.go": valueGo})
		edit := tc("e", "file_edit", map[string]any{"path": "a.go", "old_string": "return 1", "new_string": "return 2"})
		be := newScripted(t, say("1. Make Value return 2."), do(edit), say("Value returns 2."), say(verdict(true, "ok")))
		rep := newHarness(t, testConfig(dir, valueCheck()), be).run(t, task)
		if !rep.Verified || be.left() != 0 {
			t.Fatalf("Run() = %s verified=%v (%s), %d left; want verified", rep.Status, rep.Verified, rep.Reason, be.left())
		}
		reqs := be.requests()
		for i, now := range map[int]string{1: "do this task:", 3: "judge whether the change in the diffs above does this task:"} {
			user := reqs[i].Messages[1].Content
			want := "\n\nNow: " + now + "\n" + task + "\n"
			if task == long {
				want = "\n\nNow: " + strings.TrimSuffix(now, ":") + " at the top of this message.\n"
			}
			if !strings.HasSuffix(user, want) {
				t.Errorf("message %d ends %q, want %q", i, user[max(0, len(user)-200):], want)
			}
		}
		if planner := reqs[0].Messages[1].Content; strings.Contains(planner, "\nNow: ") {
			t.Errorf("the planner's message has a Now: line")
		}
	}
}
