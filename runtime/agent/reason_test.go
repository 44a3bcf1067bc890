package agent

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/check"
	"flow/runtime/config"
	"flow/runtime/editor"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// Scripted turns of the reason table.
var (
	planTurn  = ollamatest.Turn{Content: "1. Edit a.go."}
	editTurn  = ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}}
	doneTurn  = ollamatest.Turn{Content: "Edited a.go."}
	approveOK = ollamatest.Turn{Content: verdict(true, "looks right")}
)

// TestRunReasonTable drives the real service (a Disk, the journal, the
// check runner, the Ollama client against the scripted fake server) into
// each way a run or a check ends without being verified, and pins the one
// sentence it gives: the report's reason, and its error too.
func TestRunReasonTable(t *testing.T) {
	lint := func(script string) config.Check { return shCheck("lint", config.KindLint, []string{"go"}, script) }
	tests := []struct {
		name    string
		trusted bool
		checks  []config.Check
		turns   []ollamatest.Turn
		setup   func(*config.Config)
		status  string
		reason  string // exact, or a prefix when prefix is set
		prefix  bool
	}{
		{name: "check failed with its exit code", trusted: true,
			checks: []config.Check{lint("grep -q fixed a.go && exit 3")},
			setup:  func(c *config.Config) { c.Agent.Baseline = false },
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn},
			status: report.StatusFailed, reason: "The required check lint (exit 3) failed; its output says why"},
		{name: "check broken by the run", trusted: true,
			checks: []config.Check{lint("if grep -q fixed a.go; then exit 3; fi")},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn},
			status: report.StatusFailed, reason: "Check lint passed before this run and fails now (broken by this run); lint exits 3, its output says why"},
		{name: "check already failing before the run", trusted: true,
			checks: []config.Check{lint("exit 3")},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn},
			status: report.StatusFailed, reason: "Check lint was failing before this run and still fails (pre-existing); lint exits 3, its output says why"},
		{name: "no checks configured", trusted: true,
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn},
			status: report.StatusUnverified, reason: check.ReasonNoChecks},
		{name: "missing executable", trusted: true,
			checks: []config.Check{{Name: "lint", Cmd: []string{"flow-no-such-linter-x9"}, Required: true, Kind: config.KindLint, Filetypes: []string{"go"}, Timeout: 20000}},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn},
			status: report.StatusUnverified, reason: "The check lint could not start: flow-no-such-linter-x9 is not installed or not on PATH; install it or change [checks.lint] cmd"},
		{name: "coder made no change", trusted: true,
			checks: []config.Check{lint("grep -q fixed a.go")},
			turns:  []ollamatest.Turn{planTurn, {Content: "Nothing to do."}, {Content: "Still nothing to do."}}, // the reminder; no reviewer
			status: report.StatusFailed, reason: "The coder made no change, and check lint was failing before this run and still fails (pre-existing); lint exits 1, its output says why"},
		{name: "change only to comments", trusted: true,
			checks: []config.Check{lint("true")},
			turns: []ollamatest.Turn{planTurn, {ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit",
				Arguments: args(map[string]any{"path": "a.go", "old_string": "func A()", "new_string": "// A is fixed.\nfunc A()"})}}}, doneTurn},
			status: report.StatusUnverified, reason: "The change to a.go only touches comments, blank lines or whitespace, so the code the checks ran is the code they ran before: make the change in the code itself (if the task is about comments, review it yourself)"},
		{name: "no check shows the change", trusted: true,
			checks: []config.Check{lint("true")},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn}, // no reviewer: the cycle cannot verify
			status: report.StatusUnverified, reason: verify.ReasonNoEvidence + ": the required checks passed before this run and pass now, and the run added or changed no test; " +
				"add a test that fails without the change and passes with it (for a change that should alter no behaviour, set [verify] behaviour_preserving = true or run with --behaviour-preserving)"},
		{name: "no check shows the change after the coder was asked", trusted: true,
			checks: []config.Check{lint("true")},
			setup:  func(c *config.Config) { c.Agent.MaxCycles = 3 },
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn, {Content: "The change is done."}, {Content: "It is done."}}, // asked once (and reminded), then the run ends
			status: report.StatusUnverified, reason: ReasonNoEvidenceAfterAsking},
		{name: "behaviour preserving with nothing broken verifies", trusted: true,
			checks: []config.Check{lint("true")},
			setup:  func(c *config.Config) { c.Verify.BehaviourPreserving = true },
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn, approveOK},
			status: report.StatusOK, reason: ""},
		{name: "reviewer rejected with its first issue", trusted: true,
			checks: []config.Check{lint("grep -q fixed a.go")},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn, {Content: verdict(false, "not yet", "A() still returns 1", "no test")}},
			status: report.StatusFailed, reason: "The reviewer rejected the change: A() still returns 1"},
		{name: "advisory reviewer rejected: unverified, not failed", trusted: true,
			checks: []config.Check{lint("grep -q fixed a.go")},
			setup:  func(c *config.Config) { c.Verify.Reviewer = config.ReviewerAdvisory },
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn, {Content: verdict(false, "not yet", "A() still returns 1", "no test")}},
			status: report.StatusUnverified, reason: "The reviewer rejected the change: A() still returns 1 (the reviewer is advisory, verify.reviewer, so the run is unverified, not failed: read its issues and the diff)"},
		{name: "unparseable reviewer reply", trusted: true,
			checks: []config.Check{lint("grep -q fixed a.go")},
			turns:  []ollamatest.Turn{planTurn, editTurn, doneTurn, {Content: "Looks fine to me."}, {Content: "still not JSON"}},
			status: report.StatusUnverified, reason: "The reviewer's reply was not a verdict (it could not be read as a JSON verdict), so the change was not judged: run again, or use a model that follows JSON formats"},
		{name: "empty model reply", trusted: true,
			checks: []config.Check{lint("true")},
			turns:  []ollamatest.Turn{{}, {Content: " \n"}},
			status: report.StatusError, reason: "The planner got an empty reply from the model (its tool call may have been malformed): it was told once and replied empty again; use a model", prefix: true},
		{name: "turn budget exhausted", trusted: true,
			checks: []config.Check{lint("true")},
			setup:  func(c *config.Config) { c.Agent.MaxIterations = 1 },
			turns:  []ollamatest.Turn{planTurn, editTurn},
			status: report.StatusUnverified, reason: "The coder used all 1 of its turns (agent.max_iterations) without finishing: raise it or give a narrower task"},
		{name: "model server failure", trusted: true,
			checks: []config.Check{lint("true")},
			turns:  []ollamatest.Turn{{Status: 500, Error: "model runner crashed"}},
			status: report.StatusError, reason: "The model server failed while the planner was working: ", prefix: true},
		{name: "read-only without --trusted",
			checks: []config.Check{lint("true")},
			turns:  []ollamatest.Turn{planTurn},
			status: report.StatusUnverified, reason: ReasonReadOnly},
		{name: "invalid task", trusted: true, setup: func(c *config.Config) { c.Agent.MaxTaskChars = 3 },
			status: report.StatusError, reason: "The task is longer than agent.max_task_chars (3 characters): shorten it or raise the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a\n\nfunc A() string { return \"broken\" }\n"})
			cfg := testConfig(dir, tc.checks...)
			cfg.Trusted = tc.trusted
			if tc.setup != nil {
				tc.setup(cfg)
			}
			srv := ollamatest.New(t, tc.turns...)
			svc := newService(t, cfg, ollamaBackend(t, srv, cfg), t.TempDir())
			rep := svc.Run(t.Context(), "fix a.go", nil)
			got := rep.Reason
			if tc.prefix && strings.HasPrefix(got, tc.reason) {
				got = tc.reason
			}
			if rep.Status != tc.status || got != tc.reason {
				t.Errorf("Run() = %s, reason %q\nwant %s, reason %q", rep.Status, rep.Reason, tc.status, tc.reason)
			}
			if rep.Error != rep.Reason {
				t.Errorf("Run() error = %q, want the reason %q", rep.Error, rep.Reason)
			}
			if n := srv.Pending(); n != 0 {
				t.Errorf("%d scripted turns left unused", n)
			}
			for _, bad := range []string{"ask the user", "you should", "call the tool"} {
				if strings.Contains(strings.ToLower(rep.Reason), bad) {
					t.Errorf("reason %q has model-directed wording %q", rep.Reason, bad)
				}
			}
		})
	}
}

// TestCheckReasonTable: the service's check reports name their cause.
func TestCheckReasonTable(t *testing.T) {
	tests := []struct {
		name    string
		trusted bool
		checks  []config.Check
		run     string
		status  string
		reason  string
	}{
		{"refused without --trusted", false, []config.Check{shCheck("test", "test", nil, "true")}, "",
			report.StatusUnverified, check.ReasonUntrusted},
		{"unknown name lists the configured ones", true, []config.Check{shCheck("vet", "lint", nil, "true"), shCheck("test", "test", nil, "true")}, "tset",
			report.StatusUnverified, `No check named "tset" is configured; the configured checks are vet, test`},
		{"failed with its exit code", true, []config.Check{shCheck("vet", "lint", nil, "true"), shCheck("test", "test", nil, "exit 2")}, "",
			report.StatusFailed, "The required check test (exit 2) failed; its output says why"},
		{"no checks", true, nil, "", report.StatusUnverified, check.ReasonNoChecks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, nil)
			cfg := testConfig(dir, tc.checks...)
			cfg.Trusted = tc.trusted
			svc := newService(t, cfg, nil, t.TempDir())
			rep := svc.Check(t.Context(), tc.run, nil)
			if rep.Status != tc.status || rep.Reason != tc.reason || rep.Error != tc.reason {
				t.Errorf("Check(%q) = %s, reason %q, error %q, want %s %q for both", tc.run, rep.Status, rep.Reason, rep.Error, tc.status, tc.reason)
			}
		})
	}
}

// TestReasonSentences is the unit table of the sentences the service table
// cannot reach without an editor or a race: each maps one cause to its
// sentence.
func TestReasonSentences(t *testing.T) {
	cfg := config.Default()
	cases := []struct{ name, got, want string }{
		{"unsaved buffer names the file",
			verify.UnsavedReason(editor.Context{DirtyBuffers: []any{map[string]any{"path": "calc.go"}}}),
			"calc.go has unsaved changes in the editor, which the checks would not see: save or discard it, then run again"},
		{"unsaved buffers name the files",
			verify.UnsavedReason(editor.Context{Modified: true, Raw: map[string]any{"path": "a.go"}, DirtyBuffers: []any{map[string]any{"path": "a.go"}, map[string]any{"path": "b.go"}}}),
			"a.go and b.go have unsaved changes in the editor, which the checks would not see: save or discard them, then run again"},
		{"context overflow",
			end{cause: causeContextOverflow, detail: "the next prompt is about 9000 tokens: raise ollama.context_length"}.reason(&cfg, "coder"),
			"The coder's prompt no longer fits the model's context window (the next prompt is about 9000 tokens: raise ollama.context_length)"},
		{"tool-call budget",
			end{cause: causeToolCallBudget}.reason(&cfg, "coder"),
			"The run used all 64 tool calls (agent.max_tool_calls) while the coder was working: raise it or give a narrower task"},
		{"context budget",
			end{cause: causeContextBudget}.reason(&cfg, "reviewer"),
			"The reviewer's conversation outgrew agent.max_context_chars (100000 characters): raise it or give a narrower task"},
		{"empty verdict",
			end{cause: causeNoVerdict, empty: true}.reason(&cfg, "reviewer"),
			"The reviewer's reply was not a verdict (it was empty), so the change was not judged: run again, or use a model that follows JSON formats"},
		{"cancelled", end{cause: causeCancelled}.reason(&cfg, "coder"), ReasonCancelled},
		{"rejected without issues", rejectedReason(report.Role{Summary: "wrong file"}), "The reviewer rejected the change: wrong file"},
		{"empty task", invalidTaskReason(&cfg, " "), "The task is empty: say what to change"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
	// A stale verification names the file that changed:
	// TestExternalChangeDuringReviewIsStale; a cancelled run:
	// TestCancelDuringRunningCheck; weakening: the guard's tests.
}
