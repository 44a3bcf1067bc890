package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// goLint is a required lint check for Go files that passes when a.go
// contains "fixed".
func goLint() config.Check {
	return shCheck("lint", config.KindLint, []string{"go"}, "grep -q fixed a.go")
}

// editScript is a planner that lists files, a coder that edits a.go, and a
// reviewer that reads it and answers answer.
func editScript(answer string) []step {
	return []step{
		do(tc("p1", "file_list", nil)),
		say("1. Edit a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		do(tc("r1", "file_read", map[string]any{"path": "a.go"})),
		say(answer),
	}
}

func TestRoleModelsToolOffersAndVerifiedRun(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Models = config.Models{Planner: "m-plan", Coder: "m-code", Reviewer: "m-rev"}
	be := newScripted(t, editScript(verdict(true, "looks right"))...)
	h := newHarness(t, cfg, be)

	rep := h.run(t, "fix a.go")

	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() = %s verified=%v (reason %q, error %q, roles %v), want ok verified", rep.Status, rep.Verified, rep.Reason, rep.Error, roleStatuses(rep))
	}
	reqs := be.requests()
	var models []string
	for _, r := range reqs {
		models = append(models, r.Model)
	}
	if diff := cmp.Diff([]string{"m-plan", "m-plan", "m-code", "m-code", "m-rev", "m-rev"}, models); diff != "" {
		t.Errorf("models per call (-want +got):\n%s", diff)
	}
	// Every role is declared the same tools, writers included: the shared
	// prefix. What a role may call, the host decides when it calls.
	writers := []string{"file_write", "file_edit", "flow_check"}
	for i, r := range reqs {
		names := toolNames(r)
		for _, w := range writers {
			if !slices.Contains(names, w) {
				t.Errorf("request %d (%s) offers %v, want the shared list with %s", i, r.Model, names, w)
			}
		}
		if !slices.Equal(names, toolNames(reqs[0])) {
			t.Errorf("request %d (%s) offers %v, want %v as every request", i, r.Model, names, toolNames(reqs[0]))
		}
	}
	for i, id := range map[int]string{1: "p1", 3: "c1", 5: "r1"} {
		msgs := toolMessages(reqs[i])
		if len(msgs) != 1 || msgs[0].ToolCallID != id {
			t.Errorf("request %d tool messages = %+v, want one with id %q", i, msgs, id)
		}
	}
	if got := h.read(t, "a.go"); got != "package a; var fixed int\n" {
		t.Errorf("a.go = %q, want the edit applied", got)
	}
	if diff := cmp.Diff([]string{"a.go"}, rep.ChangedFiles); diff != "" {
		t.Errorf("ChangedFiles (-want +got):\n%s", diff)
	}
	v := rep.Verification
	if v == nil || len(v.Coverage) != 1 || v.Coverage[0].Source != report.SourceCheck || v.Coverage[0].Status != "ok" {
		t.Fatalf("Verification.Coverage = %+v, want one ok item from flow.check", v)
	}
	if len(rep.Checks) != 1 || rep.Checks[0].Returncode == nil || *rep.Checks[0].Returncode != 0 {
		t.Errorf("Checks = %+v, want lint with returncode 0", rep.Checks)
	}
	if v.Fingerprints["a.go"] == "" {
		t.Errorf("Verification.Fingerprints = %v, want a hash for a.go", v.Fingerprints)
	}
	if rep.ModelCalls != 6 || rep.ToolCalls != 3 || rep.Cycles != 1 || len(toolEvents(rep)) != 3 || len(modelCalls(rep)) != 6 {
		t.Errorf("counters = calls %d, tools %d, cycles %d, tool events %d, model-call events %d; want 6, 3, 1, 3, 6",
			rep.ModelCalls, rep.ToolCalls, rep.Cycles, len(toolEvents(rep)), len(modelCalls(rep)))
	}
	if len(rep.VerificationHistory) != 1 {
		t.Errorf("len(VerificationHistory) = %d, want 1", len(rep.VerificationHistory))
	}
	rv := rep.Roles[2]
	if rv.Approved == nil || !*rv.Approved || rv.Summary != "looks right" {
		t.Errorf("reviewer = %+v, want approved with the verdict's summary", rv)
	}
	if rep.Summary != "Edited a.go." {
		t.Errorf("Summary = %q, want the coder's final text", rep.Summary)
	}
	// The agent's own ids have the one shape (report.NewRunID), the same as
	// the ids the service names journal runs with.
	if !strings.HasPrefix(rep.RunID, rep.StartedAt[:4]) || len(rep.RunID) != len("20261129T152400Z-")+8 {
		t.Errorf("RunID = %q, want <timestamp>-<8 hex>", rep.RunID)
	}
	if rep.Workspace != dir {
		t.Errorf("Workspace = %q, want %q", rep.Workspace, dir)
	}
}

func TestEventsOfAVerifiedRun(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be := newScripted(t, editScript(verdict(true, "ok"))...)
	cfg := testConfig(dir, goLint())
	cfg.Agent.Baseline = false // its check events are tested in guard_test.go
	// Without a baseline nothing shows the fix; the task is declared to
	// change no behaviour so that the run verifies on its checks alone.
	cfg.Verify.BehaviourPreserving = true
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusOK {
		t.Fatalf("Run() status = %s (%s %s), want ok", rep.Status, rep.Reason, rep.Error)
	}
	role := []progress.Kind{progress.RoleStart, progress.ModelTurn, progress.ModelReply, progress.ToolStart, progress.ToolEnd, progress.ModelTurn, progress.ModelReply, progress.RoleEnd}
	want := []progress.Kind{progress.RunStart}
	want = append(want, role...) // planner
	want = append(want, role...) // coder
	want = append(want, progress.CheckStart, progress.CheckEnd, progress.Verification)
	want = append(want, role...) // reviewer
	want = append(want, progress.RunEnd)
	if diff := cmp.Diff(want, h.eventKinds()); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.RunID != rep.RunID || e.Time.IsZero() {
			t.Errorf("event %s has run id %q time %v, want %q and a time", e.Kind, e.RunID, e.Time, rep.RunID)
		}
		switch e.Kind {
		case progress.CheckStart, progress.CheckEnd:
			if e.Role != progress.PhaseVerification || e.Check != "lint" {
				t.Errorf("check event = %+v, want role verification, check lint", e)
			}
		case progress.ToolEnd:
			if e.Status != "ok" || e.Bytes == 0 || e.ToolCallID == "" {
				t.Errorf("tool_end event = %+v, want ok with bytes and id", e)
			}
		case progress.RunEnd:
			if e.Report == nil || e.Report.Status != report.StatusOK {
				t.Errorf("run_end event report = %+v, want the final ok report", e.Report)
			}
		case progress.Verification:
			if e.Verification == nil || !e.Verification.Verified {
				t.Errorf("verification event = %+v, want verified", e.Verification)
			}
		}
	}
}

func TestOnlyTestKindCheckNeverVerifies(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, shCheck("tests", config.KindTest, []string{"go"}, "true"))
	h := newHarness(t, cfg, newScripted(t, editScript(verdict(true, "ok"))...))
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusUnverified || rep.Verified {
		t.Fatalf("Run() = %s verified=%v, want unverified", rep.Status, rep.Verified)
	}
	v := rep.Verification
	if !strings.HasPrefix(v.Reason, "Missing or failing static analysis for changed source: no lint check passed on a.go") {
		t.Errorf("Verification.Reason = %q, want the coverage reason", v.Reason)
	}
	cov := v.Coverage[0]
	if cov.Status != "unverified" || len(cov.Evidence) != 2 || cov.Evidence[0]["status"] != "unavailable" || cov.Evidence[1]["status"] != "unavailable" {
		t.Errorf("Coverage[0] = %+v, want unverified with unavailable editor evidence", cov)
	}
	if rep.Reason != v.Reason {
		t.Errorf("report Reason = %q, want the verification's %q", rep.Reason, v.Reason)
	}
}

func TestNoChecksOrUnsupportedLanguageNeverVerify(t *testing.T) {
	t.Run("no checks, no edits", func(t *testing.T) {
		dir := workspace(t, map[string]string{"a.go": "package a\n"})
		be := newScripted(t, say("plan"), say("nothing to do"), say(verdict(true, "fine")))
		h := newHarness(t, testConfig(dir), be)
		rep := h.run(t, "look")
		if rep.Status != report.StatusUnverified || rep.Verified || rep.Verification.Status != "unverified" {
			t.Errorf("Run() = %s verified=%v verification %s, want unverified", rep.Status, rep.Verified, rep.Verification.Status)
		}
	})
	t.Run("unsupported language", func(t *testing.T) {
		dir := workspace(t, map[string]string{"a.go": "package a; var fixed int\n"})
		be := newScripted(t,
			say("plan"),
			do(tc("c1", "file_write", map[string]any{"path": "App.vue", "content": "<template/>\n"})),
			say("wrote App.vue"),
			say(verdict(true, "fine")),
		)
		h := newHarness(t, testConfig(dir, goLint()), be)
		rep := h.run(t, "add a component")
		if rep.Status != report.StatusUnverified || rep.Verified {
			t.Fatalf("Run() = %s verified=%v, want unverified", rep.Status, rep.Verified)
		}
		if c := rep.Verification.Coverage; len(c) != 1 || c[0].Language != "vue" || c[0].Status != "unverified" {
			t.Errorf("Coverage = %+v, want one unverified vue item", c)
		}
		if !rep.Verification.Checks[0].Required || rep.Verification.Checks[0].Status != "ok" {
			t.Errorf("lint = %+v, want it to pass (the gap is coverage only)", rep.Verification.Checks[0])
		}
	})
	t.Run("documentation only with a passing check", func(t *testing.T) {
		dir := workspace(t, map[string]string{"a.go": "package a; var fixed int\n"})
		be := newScripted(t,
			say("plan"),
			do(tc("c1", "file_write", map[string]any{"path": "NOTES.md", "content": "# notes\n"})),
			say("wrote notes"),
			say(verdict(true, "fine")),
		)
		// Notes change no behaviour: no check can show them, so the task
		// is declared behaviour preserving (the evidence rule's escape).
		cfg := testConfig(dir, goLint())
		cfg.Verify.BehaviourPreserving = true
		h := newHarness(t, cfg, be)
		rep := h.run(t, "write notes")
		if rep.Status != report.StatusOK || len(rep.Verification.Coverage) != 0 {
			t.Errorf("Run() = %s, coverage %+v; want ok with documentation exempt", rep.Status, rep.Verification.Coverage)
		}
	})
}

func TestReviewerRejectionNeverVerifies(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	be := newScripted(t, editScript(verdict(false, "wrong approach", "uses a global"))...)
	h := newHarness(t, testConfig(dir, goLint()), be)
	rep := h.run(t, "fix a.go")
	if rep.Status != report.StatusFailed || rep.Verified {
		t.Errorf("Run() = %s verified=%v, want failed, not verified", rep.Status, rep.Verified)
	}
	if !rep.Verification.Verified {
		t.Errorf("Verification.Verified = false, want true (checks and coverage passed)")
	}
	rv := rep.Roles[2]
	if rv.Status != "ok" || rv.Approved == nil || *rv.Approved || !slices.Equal(rv.Issues, []string{"uses a global"}) {
		t.Errorf("reviewer = %+v, want ok, approved false, the issue", rv)
	}
	if want := "The reviewer rejected the change: uses a global"; rep.Reason != want || rep.Error != want {
		t.Errorf("Reason, Error = %q, %q, want %q (its first issue)", rep.Reason, rep.Error, want)
	}
}

func TestReviewerVerdictForms(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		requested  string // the answer to the verdict request; "" when none is expected
		wantStatus string
		wantRole   string
		approved   *bool
	}{
		{"json fence", "The change is correct.\n```json\n" + verdict(true, "good") + "\n```\n", "", report.StatusOK, "ok", ptr(true)},
		{"trailing object after prose", "I read a.go. Verdict: " + verdict(true, "good"), "", report.StatusOK, "ok", ptr(true)},
		{"prose, then a structured verdict", "Looks good to me, approved!", verdict(true, "good"), report.StatusOK, "ok", ptr(true)},
		{"prose, then a fenced verdict from a server ignoring format", "Looks good.", "```json\n" + verdict(false, "bad", "x") + "\n```", report.StatusFailed, "ok", ptr(false)},
		{"prose only", "Looks good to me, approved!", "Still approved!", report.StatusUnverified, "unverified", nil},
		{"approved as string", `{"approved":"yes","summary":"x"}`, `{"approved":"yes"}`, report.StatusUnverified, "unverified", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
			steps := editScript(tc.answer)
			if tc.requested != "" {
				steps = append(steps, say(tc.requested))
			}
			be := newScripted(t, steps...)
			h := newHarness(t, testConfig(dir, goLint()), be)
			rep := h.run(t, "fix a.go")
			rv := rep.Roles[2]
			if rep.Status != tc.wantStatus || rv.Status != tc.wantRole {
				t.Fatalf("Run() = %s, reviewer %s; want %s, %s", rep.Status, rv.Status, tc.wantStatus, tc.wantRole)
			}
			if (rv.Approved == nil) != (tc.approved == nil) || (rv.Approved != nil && *rv.Approved != *tc.approved) {
				t.Errorf("reviewer Approved = %v, want %v", rv.Approved, tc.approved)
			}
			if tc.approved == nil && rv.Error != MsgReviewerVerdict {
				t.Errorf("reviewer Error = %q, want %q", rv.Error, MsgReviewerVerdict)
			}
			if tc.approved == nil && rep.Verified {
				t.Errorf("Run() verified without a verdict")
			}
			reqs := be.requests()
			last := reqs[len(reqs)-1]
			for i, r := range reqs[4:] { // every reviewer request asks for the verdict's structure
				if string(r.Format) != VerdictSchema || len(r.Tools) != len(reqs[0].Tools) {
					t.Errorf("reviewer request %d format = %s with %d tools, want the verdict schema and the shared %d", i, r.Format, len(r.Tools), len(reqs[0].Tools))
				}
			}
			if tc.requested == "" {
				return
			}
			if m := last.Messages[len(last.Messages)-1]; m.Role != model.RoleUser || m.Content != verdictRequest {
				t.Errorf("verdict request ends with %+v, want the verdict request", m)
			}
			if calls := modelCalls(rep); calls[len(calls)-1].Note != "verdict request" || rv.Turns != 3 {
				t.Errorf("last model call = %+v, reviewer turns %d; want the verdict request noted, 3 turns", calls[len(calls)-1], rv.Turns)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestExternalChangeDuringReviewIsStale(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	steps := editScript(verdict(true, "good"))
	steps[4].hook = func(model.Request) {
		// Someone edits the file while the reviewer works; same length,
		// different bytes, so only a content hash notices.
		writeFile(t, dir, "a.go", "package a // fixeD\n")
	}
	h := newHarness(t, testConfig(dir, goLint()), newScripted(t, steps...))
	rep := h.run(t, "fix a.go")
	if rep.Status == report.StatusOK || rep.Verified {
		t.Fatalf("Run() = %s verified=%v, want not verified", rep.Status, rep.Verified)
	}
	v := rep.Verification
	if v.Status != report.StatusStale || v.Verified || v.Reason != "Changed files were modified during verification/review: a.go changed after the checks ran, so their results no longer apply; run again" {
		t.Errorf("Verification = %s %v %q, want stale", v.Status, v.Verified, v.Reason)
	}
	if h := rep.VerificationHistory[0]; h.Status != report.StatusStale {
		t.Errorf("VerificationHistory[0].Status = %s, want stale too", h.Status)
	}
	if rep.Status != report.StatusUnverified {
		t.Errorf("Run() status = %s, want unverified", rep.Status)
	}
}

func TestBackendErrorEndsRunInError(t *testing.T) {
	t.Run("planner", func(t *testing.T) {
		dir := workspace(t, nil)
		be := newScripted(t, step{err: errBoom})
		h := newHarness(t, testConfig(dir, goLint()), be)
		rep := h.run(t, "task")
		if rep.Status != report.StatusError || !strings.HasPrefix(rep.Error, "The model server failed while the ") || !strings.HasSuffix(rep.Error, " was working: connection refused by fake") {
			t.Errorf("Run() = %s %q, want error with the backend message", rep.Status, rep.Error)
		}
		if rep.ModelCalls != 1 || rep.Cycles != 0 || rep.Verification != nil {
			t.Errorf("ModelCalls %d, Cycles %d, Verification %v; want 1, 0, nil", rep.ModelCalls, rep.Cycles, rep.Verification)
		}
	})
	t.Run("coder", func(t *testing.T) {
		dir := workspace(t, map[string]string{"a.go": "package a; var fixed int\n"})
		be := newScripted(t, say("plan"), step{err: errBoom})
		cfg := testConfig(dir, goLint())
		cfg.Agent.MaxCycles = 2
		h := newHarness(t, cfg, be)
		rep := h.run(t, "task")
		if rep.Status != report.StatusError || !strings.Contains(rep.Error, "connection refused by fake") {
			t.Errorf("Run() = %s %q, want error", rep.Status, rep.Error)
		}
		if got := roleStatuses(rep); !slices.Equal(got, []string{"planner:ok", "coder:error"}) {
			t.Errorf("roles = %v, want planner ok, coder error, no reviewer", got)
		}
		if rep.Cycles != 1 || len(rep.VerificationHistory) != 1 {
			t.Errorf("Cycles %d, history %d; want 1, 1 (verification still ran, no second cycle)", rep.Cycles, len(rep.VerificationHistory))
		}
	})
}

func TestUntrustedRunOnlyPlans(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir, goLint())
	cfg.Trusted = false
	be := newScripted(t,
		do(tc("p1", "file_write", map[string]any{"path": "x.go", "content": "package x\n"})),
		say("Plan: edit a.go"),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "change a.go")
	if rep.Status != report.StatusUnverified || rep.Verified || rep.Summary != "Plan: edit a.go" || rep.Reason != ReasonReadOnly {
		t.Errorf("Run() = %s verified=%v summary %q reason %q, want unverified plan with the read-only reason", rep.Status, rep.Verified, rep.Summary, rep.Reason)
	}
	if len(rep.Roles) != 1 || rep.Cycles != 0 || rep.ModelCalls != 2 {
		t.Errorf("roles %v, cycles %d, model calls %d; want the planner only", roleStatuses(rep), rep.Cycles, rep.ModelCalls)
	}
	if len(rep.Checks) != 0 {
		t.Errorf("Checks = %+v, want none run", rep.Checks)
	}
	if fileExists(dir, "x.go") {
		t.Errorf("x.go was written by an untrusted planner")
	}
}

func TestLargeFileReadDoesNotEndRunInError(t *testing.T) {
	// 250 KB of JSON-heavy text: escaping grows it, the tool must cut the
	// payload rather than fail.
	line := `{"key": "value with \"quotes\" and \\backslashes\\"},` + "\n"
	big := strings.Repeat(line, 250*1024/len(line))
	dir := workspace(t, map[string]string{"big.go": big})
	be := newScripted(t, do(tc("p1", "file_read", map[string]any{"path": "big.go"})), say("plan"))
	cfg := testConfig(dir)
	cfg.Trusted = false
	h := newHarness(t, cfg, be)
	rep := h.run(t, "read big.go")
	if rep.Status == report.StatusError || rep.Roles[0].Status != "ok" {
		t.Fatalf("Run() = %s %q, planner %s; want no error", rep.Status, rep.Error, rep.Roles[0].Status)
	}
	msgs := toolMessages(be.requests()[1])
	if len(msgs) != 1 || len([]rune(msgs[0].Content)) > 40000 {
		t.Fatalf("tool message = %d chars, want at most 40000", len([]rune(msgs[0].Content)))
	}
	if res := resultOf(t, msgs[0]); res["status"] != "ok" || res["truncated"] != true {
		t.Errorf("file_read result status %v truncated %v, want ok and truncated", res["status"], res["truncated"])
	}
	if ev := toolEvents(rep); len(ev) != 1 || !ev[0].Truncated || ev[0].Bytes == 0 {
		t.Errorf("tool events = %+v, want one truncated with bytes", ev)
	}
}

func TestRoleSummaryAndUsage(t *testing.T) {
	dir := workspace(t, nil)
	long := strings.Repeat("é", 20000)
	plan := say(long)
	plan.resp.Usage = model.Usage{PromptTokens: 100, CompletionTokens: 7}
	first := do(tc("p1", "file_list", nil))
	first.resp.Usage = model.Usage{PromptTokens: 50, CompletionTokens: 3}
	cfg := testConfig(dir)
	cfg.Trusted = false
	h := newHarness(t, cfg, newScripted(t, first, plan))
	rep := h.run(t, "plan it")
	if n := len([]rune(rep.Roles[0].Summary)); n != 16000 {
		t.Errorf("planner summary = %d chars, want 16000", n)
	}
	if rep.Usage != (report.Usage{PromptTokens: 150, CompletionTokens: 10}) {
		t.Errorf("Usage = %+v, want 150/10", rep.Usage)
	}
}

// TestReadOnlyRolesRefusedByTheHost: every role is declared the coder's
// tools (the shared prefix), so a planner can call file_write and a
// reviewer flow_check; the host refuses both at the call, the files stay
// as they were, and the model reads why.
func TestReadOnlyRolesRefusedByTheHost(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, goLint())
	be := newScripted(t,
		do(tc("p1", "file_write", map[string]any{"path": "a.go", "content": "package a; var planned int\n"})),
		say("1. Edit a.go."),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say("Edited a.go."),
		do(tc("r1", "flow_check", nil)),
		say(verdict(true, "right")),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix a.go")
	if got := h.read(t, "a.go"); got != "package a; var fixed int\n" {
		t.Errorf("a.go = %q, want only the coder's edit", got)
	}
	reqs := be.requests()
	for i, want := range map[int]string{1: "Tool 'file_write' is unavailable for role planner", 5: "Tool 'flow_check' is unavailable for role reviewer"} {
		msgs := toolMessages(reqs[i])
		if len(msgs) != 1 || !strings.Contains(msgs[0].Content, want) {
			t.Errorf("request %d tool messages = %+v, want the refusal %q", i, msgs, want)
		}
	}
	if rep.Roles[0].ToolErrors != 1 || rep.Roles[2].ToolErrors != 1 {
		t.Errorf("tool errors: planner %d, reviewer %d; want 1 each", rep.Roles[0].ToolErrors, rep.Roles[2].ToolErrors)
	}
}
