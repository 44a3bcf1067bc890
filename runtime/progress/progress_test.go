package progress

import (
	"testing"

	"flow/runtime/report"
)

func TestColumn(t *testing.T) {
	tests := []struct {
		e    Event
		want string
	}{
		{Event{Kind: RunStart, Message: "fix the\nbug"}, `run      start "fix the bug"`},
		{Event{Kind: RoleStart, Role: "planner", Message: "qwen2.5-coder:7b"}, "planner  start model qwen2.5-coder:7b"},
		{Event{Kind: ModelTurn, Role: "coder", Turn: 2}, "coder    turn 2"},
		{Event{Kind: ModelReply, Role: "coder", Turn: 2, Message: "2 tool calls", DurationMS: 1234}, "coder    reply 2: 2 tool calls 1.2s"},
		{Event{Kind: ModelReply, Role: "coder", Turn: 1, Error: "Backend/protocol failure: boom"}, "coder    reply 1: Backend/protocol failure: boom"},
		{Event{Kind: ModelReply, Role: "coder", Turn: 3, Message: "1 tool call", DurationMS: 812, ModelCall: &report.Event{Kind: report.EventModelCall, PromptTokens: 812, CompletionTokens: 40, DoneReason: "stop", NativeToolCalls: 1}}, "coder    reply 3: 1 tool call 812ms (812+40 tokens, stop)"},
		{Event{Kind: ModelReply, Role: "coder", Turn: 1, Message: "1 tool call", DurationMS: 64000, ModelCall: &report.Event{Kind: report.EventModelCall, PromptTokens: 1346, CompletionTokens: 80, PromptEvalMS: 58300, DoneReason: "stop"}}, "coder    reply 1: 1 tool call 64.0s (1346+80 tokens, prompt 58.3s, stop)"},
		{Event{Kind: ModelReply, Role: "planner", Turn: 1, Message: "2 tool calls", ModelCall: &report.Event{Kind: report.EventModelCall, DoneReason: "stop", TextToolCalls: 2, Note: "verdict request"}}, "planner  reply 1: 2 tool calls (stop, 2 tool calls from text, verdict request)"},
		{Event{Kind: ToolEnd, Role: "coder", Tool: "file_read", Message: "a.go", Status: "ok", Repeated: true}, "coder    tool file_read a.go ok (repeated call: not run again, previous result reused)"},
		{Event{Kind: ToolStart, Role: "coder", Tool: "file_edit", Message: "src/a.go"}, "coder    tool file_edit src/a.go ..."},
		{Event{Kind: ToolEnd, Role: "coder", Tool: "file_edit", Message: "src/a.go", Status: "ok", DurationMS: 3}, "coder    tool file_edit src/a.go ok 3ms"},
		{Event{Kind: ToolEnd, Role: "planner", Tool: "file_read", Message: "big.go", Status: "ok", DurationMS: 5, Truncated: true}, "planner  tool file_read big.go ok 5ms (truncated)"},
		{Event{Kind: ToolEnd, Role: "planner", Tool: "file_write", Status: "error", Error: "Tool 'file_write' is unavailable"}, "planner  tool file_write error: Tool 'file_write' is unavailable"},
		{Event{Kind: CheckStart, Check: "lint"}, "check    lint ..."},
		{Event{Kind: CheckEnd, Check: "tests", Status: "failed", DurationMS: 2500}, "check    tests failed 2.5s"},
		{Event{Kind: Verification, Status: "ok", Verification: &report.Verification{Status: "ok", Verified: true}}, "verify   ok verified"},
		{Event{Kind: Verification, Status: "stale", Verification: &report.Verification{Status: "stale", Reason: "Changed files were modified"}}, "verify   stale: Changed files were modified"},
		{Event{Kind: RoleEnd, Role: "coder", Status: "unverified", Turn: 6, Error: "Role iteration budget exhausted"}, "coder    unverified after 6 turns: Role iteration budget exhausted"},
		{Event{Kind: RunEnd, Status: "ok", DurationMS: 61000, Report: &report.Run{Verified: true, ModelCalls: 6, ToolCalls: 3, ChangedFiles: []string{"a.go"}}}, "run      ok verified (6 model calls, 3 tool calls, 1 changed) 61.0s"},
		{Event{Kind: RunEnd, Status: "cancelled", Error: "cancelled"}, "run      cancelled: cancelled"},
		{Event{Kind: RoleEnd, Role: "planner", Status: "ok", Turn: 1, DurationMS: 900}, "planner  ok after 1 turn 900ms"},
		{Event{Kind: RoleEnd, Role: "planner", Status: "skipped", Message: "the coder has every file"}, "planner  skipped: the coder has every file"},
		{Event{Kind: RunEnd, Status: "ok", Report: &report.Run{Verified: true, ModelCalls: 1, ToolCalls: 1}}, "run      ok verified (1 model call, 1 tool call, 0 changed)"},
	}
	for _, tc := range tests {
		t.Run(string(tc.e.Kind), func(t *testing.T) {
			if got := Column(tc.e); got != tc.want {
				t.Errorf("Column() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEventLine: MCP progress messages carry no column padding.
func TestLine(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{Kind: ToolEnd, Role: "coder", Tool: "file_edit", Message: "src/a.go", Status: "ok", DurationMS: 3}, "coder tool file_edit src/a.go ok 3ms"},
		{Event{Kind: CheckEnd, Check: "tests", Status: "failed", DurationMS: 2500}, "check tests failed 2.5s"},
		{Event{Kind: RunStart, Message: "fix"}, `run start "fix"`},
	} {
		if got := Line(tc.e); got != tc.want {
			t.Errorf("Line() = %q, want %q", got, tc.want)
		}
	}
}

func TestModelWaitString(t *testing.T) {
	got := Column(Event{Kind: ModelWait, Role: "coder", Turn: 3, DurationMS: 41_500})
	if want := "coder    turn 3: waiting for the model, 41 s"; got != want {
		t.Fatalf("Column() = %q, want %q", got, want)
	}
}
