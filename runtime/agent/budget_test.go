package agent

import (
	"slices"
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

func TestToolDenialsAndErrorsReturnMatchingIDs(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Trusted = false
	be := newScripted(t,
		do(
			tc("deny", "file_write", map[string]any{"path": "x.go", "content": "package x\n"}),
			tc("unknown", "shell_exec", map[string]any{"cmd": "rm -rf /"}),
			tc("badjson", "file_read", `{"path": "a.go"`),
			tc("extra", "file_read", map[string]any{"path": "a.go", "cwd": "/"}),
		),
		say("plan"),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "try things")
	msgs := toolMessages(be.requests()[1])
	want := []string{"deny", "unknown", "badjson", "extra"}
	if len(msgs) != len(want) {
		t.Fatalf("got %d tool messages, want %d", len(msgs), len(want))
	}
	for i, m := range msgs {
		if m.ToolCallID != want[i] {
			t.Errorf("tool message %d id = %q, want %q", i, m.ToolCallID, want[i])
		}
		if res := resultOf(t, m); res["status"] != "error" || res["error"] == "" {
			t.Errorf("tool message %s = %v, want an error result", m.ToolCallID, res)
		}
	}
	tools := toolEvents(rep)
	if rep.ToolCalls != 4 || len(tools) != 4 || rep.Roles[0].ToolErrors != 4 {
		t.Fatalf("ToolCalls %d, tool events %d, tool_errors %d; want 4, 4, 4", rep.ToolCalls, len(tools), rep.Roles[0].ToolErrors)
	}
	for i, e := range tools {
		if e.ToolCallID != want[i] || e.Status != "error" || e.Error == "" {
			t.Errorf("event %d = %+v, want error with id %q", i, e, want[i])
		}
	}
	if fileExists(dir, "x.go") {
		t.Errorf("x.go was written by a denied call")
	}
	if len(rep.ChangedFiles) != 0 {
		t.Errorf("ChangedFiles = %v, want none", rep.ChangedFiles)
	}
}

func TestMissingAndDuplicateToolCallIDs(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Trusted = false
	be := newScripted(t,
		do(
			tc("", "file_list", nil),
			tc("dup", "file_read", map[string]any{"path": "a.go"}),
			tc("dup", "file_list", nil),
			tc("", "file_read", map[string]any{"path": "a.go"}),
		),
		say("plan"),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "look")
	req := be.requests()[1]
	asst := req.Messages[2]
	if asst.Role != model.RoleAssistant || len(asst.ToolCalls) != 4 {
		t.Fatalf("recorded assistant message = %+v, want 4 calls", asst)
	}
	wantIDs := []string{"planner-1-1-0", "dup", "dup#2", "planner-1-1-3"}
	var gotCallIDs, gotMsgIDs []string
	for _, c := range asst.ToolCalls {
		gotCallIDs = append(gotCallIDs, c.ID)
	}
	msgs := toolMessages(req)
	for _, m := range msgs {
		gotMsgIDs = append(gotMsgIDs, m.ToolCallID)
	}
	if !slices.Equal(gotCallIDs, wantIDs) || !slices.Equal(gotMsgIDs, wantIDs) {
		t.Errorf("call ids %v, tool message ids %v, want both %v", gotCallIDs, gotMsgIDs, wantIDs)
	}
	wantStatus := []string{"ok", "error", "error", "ok"}
	for i, m := range msgs {
		res := resultOf(t, m)
		if res["status"] != wantStatus[i] {
			t.Errorf("result %s status = %v, want %s", m.ToolCallID, res["status"], wantStatus[i])
		}
		if wantStatus[i] == "error" && !strings.Contains(res["error"].(string), "Duplicate tool call id") {
			t.Errorf("result %s error = %v, want the duplicate-id message", m.ToolCallID, res["error"])
		}
	}
	if rep.Status != report.StatusUnverified || rep.Roles[0].Status != "ok" || rep.ToolCalls != 4 {
		t.Errorf("Run() = %s, planner %s, tool calls %d; want unverified (untrusted), ok, 4", rep.Status, rep.Roles[0].Status, rep.ToolCalls)
	}
}

func TestIterationBudgetStillRunsTheGate(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	cfg := testConfig(dir, shCheck("lint", config.KindLint, []string{"go"}, "touch gate-ran; grep -q fixed a.go"))
	cfg.Agent.MaxIterations = 1
	be := newScripted(t,
		say("plan"),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})),
		say(verdict(true, "fine")),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "fix")
	coder := rep.Roles[1]
	if coder.Status != "unverified" || coder.Error != MsgIterationBudget {
		t.Errorf("coder = %s %q, want unverified %q", coder.Status, coder.Error, MsgIterationBudget)
	}
	if rep.ModelCalls != 3 || be.left() != 0 {
		t.Errorf("ModelCalls = %d, steps left %d; want 3, 0", rep.ModelCalls, be.left())
	}
	if !fileExists(dir, "gate-ran") || len(rep.Checks) != 1 || rep.Checks[0].Status != "ok" {
		t.Errorf("checks = %+v, want the gate to have run and passed", rep.Checks)
	}
	if rep.Status != report.StatusUnverified || rep.Verified {
		t.Errorf("Run() = %s verified=%v, want unverified (coder not ok)", rep.Status, rep.Verified)
	}
}

func TestToolCallBudgetRefusesOversizedBatch(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a; var fixed int\n"})
	cfg := testConfig(dir, goLint())
	cfg.Agent.MaxToolCalls = 1
	be := newScripted(t,
		say("plan"),
		do(
			tc("w1", "file_write", map[string]any{"path": "one.go", "content": "package a\n"}),
			tc("w2", "file_write", map[string]any{"path": "two.go", "content": "package a\n"}),
		),
	)
	h := newHarness(t, cfg, be)
	rep := h.run(t, "write two files")
	if fileExists(dir, "one.go") || fileExists(dir, "two.go") {
		t.Errorf("a call of the oversized batch was executed")
	}
	coder := rep.Roles[1]
	if coder.Status != "unverified" || coder.Error != MsgToolCallBudget {
		t.Errorf("coder = %s %q, want unverified %q", coder.Status, coder.Error, MsgToolCallBudget)
	}
	// Nothing changed, so no reviewer is asked.
	if rep.ToolCalls != 0 || rep.ModelCalls != 2 || be.left() != 0 {
		t.Errorf("ToolCalls %d, ModelCalls %d, steps left %d; want 0, 2, 0", rep.ToolCalls, rep.ModelCalls, be.left())
	}
	tools := toolEvents(rep)
	if len(tools) != 2 {
		t.Fatalf("tool events = %+v, want one error event per refused call", tools)
	}
	for i, id := range []string{"w1", "w2"} {
		if e := tools[i]; e.ToolCallID != id || e.Status != "error" || e.Error != MsgToolCallBudget {
			t.Errorf("event %d = %+v, want error %q for %s", i, e, MsgToolCallBudget, id)
		}
	}
	if rep.Status != report.StatusUnverified || rep.Verified {
		t.Errorf("Run() = %s, want unverified", rep.Status)
	}
}

func TestToolCallBudgetRefusedCallsGetErrorMessages(t *testing.T) {
	// The refused batch's tool messages are part of the conversation; read
	// them through the role directly.
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Agent.MaxToolCalls = 1
	be := newScripted(t, do(tc("a", "file_list", nil), tc("", "file_list", nil)))
	h := newHarness(t, cfg, be)
	r := h.agent.start("t", nil)
	if err := r.setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := newSession(r.env, r.policyFor(config.RolePlanner), 1)
	if e := r.open(t.Context(), s, map[string]any{}); e != nil {
		t.Fatal(e.message())
	}
	st := s.outcome(s.converse(t.Context()))
	if st.Status != "unverified" || st.Error != MsgToolCallBudget {
		t.Errorf("role = %s %q, want unverified %q", st.Status, st.Error, MsgToolCallBudget)
	}
	var tools []model.Message
	for _, m := range s.conv.msgs {
		if m.Role == model.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 2 || tools[0].ToolCallID != "a" || tools[1].ToolCallID != "planner-1-1-1" {
		t.Fatalf("tool messages = %+v, want two with ids a, planner-1-1-1", tools)
	}
	for _, m := range tools {
		if res := resultOf(t, m); res["status"] != "error" || res["error"] != MsgToolCallBudget {
			t.Errorf("tool message %s = %v, want error %q", m.ToolCallID, res, MsgToolCallBudget)
		}
	}
}

func TestTaskAndContextBudgetsCallNoModel(t *testing.T) {
	tests := []struct {
		name       string
		task       string
		context    int
		wantStatus string
		wantError  string
	}{
		{"empty task", "", 100000, report.StatusError, "The task is empty: say what to change"},
		{"blank task", " \n\t", 100000, report.StatusError, "The task is empty: say what to change"},
		{"oversized task", strings.Repeat("x", 16001), 100000, report.StatusError, "The task is longer than agent.max_task_chars (16000 characters): shorten it or raise the limit"},
		{"context budget", strings.Repeat("x", 5000), 4096, report.StatusUnverified, "The planner's conversation outgrew agent.max_context_chars (4096 characters): raise it or give a narrower task"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, nil)
			cfg := testConfig(dir, goLint())
			cfg.Agent.MaxContextChars = tc.context
			be := newScripted(t)
			h := newHarness(t, cfg, be)
			rep := h.run(t, tc.task)
			if rep.Status != tc.wantStatus || rep.Error != tc.wantError {
				t.Errorf("Run() = %s %q, want %s %q", rep.Status, rep.Error, tc.wantStatus, tc.wantError)
			}
			if rep.ModelCalls != 0 || len(be.requests()) != 0 {
				t.Errorf("ModelCalls = %d, want 0", rep.ModelCalls)
			}
		})
	}
}

func TestContextBudgetAfterToolResult(t *testing.T) {
	dir := workspace(t, map[string]string{"big.txt": strings.Repeat("data line\n", 1000)})
	cfg := testConfig(dir)
	cfg.Trusted = false
	cfg.Agent.MaxContextChars = 8000
	be := newScripted(t, do(tc("p1", "file_read", map[string]any{"path": "big.txt"})))
	h := newHarness(t, cfg, be)
	rep := h.run(t, "read it")
	if rep.ModelCalls != 1 || rep.Roles[0].Error != MsgContextBudget || rep.Status != report.StatusUnverified {
		t.Errorf("Run() = %s, planner %q, model calls %d; want unverified %q after 1 call", rep.Status, rep.Roles[0].Error, rep.ModelCalls, MsgContextBudget)
	}
}

// TestContextBudgetCountsToolSchemas: declared schemas count against
// agent.max_context_chars; tools declared in the system prompt alone
// (agent.tool_declarations = "text") add nothing beyond its text.
func TestContextBudgetCountsToolSchemas(t *testing.T) {
	dir := workspace(t, nil)
	h := newHarness(t, testConfig(dir), newScripted(t))
	r := h.agent.start("", nil)
	if err := r.setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	tools := r.tools.Schemas(config.RoleCoder)
	withTools := newConversation(1<<30, tools, true)
	without := newConversation(1<<30, nil, true)
	asText := newConversation(1<<30, tools, false)
	msg := model.Message{Role: model.RoleUser, Content: "é<>&"}
	withTools.push(msg)
	without.push(msg)
	asText.push(msg)
	if asText.size() != without.size() || asText.declaredTools() != nil || len(withTools.declaredTools()) != len(tools) {
		t.Errorf("tools as text: size %d, declared %d schemas; want %d and none (native: %d)", asText.size(), len(asText.declaredTools()), without.size(), len(withTools.declaredTools()))
	}
	if diff := withTools.size() - without.size(); diff != jsonChars(tools) || diff < 500 {
		t.Errorf("schemas add %d characters, want %d (their JSON text)", diff, jsonChars(tools))
	}
	if got, want := without.size(), len([]rune(`[{"role":"user","content":"é<>&"}]`)); got != want {
		t.Errorf("conversation size = %d, want %d (no HTML or non-ASCII escaping)", got, want)
	}
}
