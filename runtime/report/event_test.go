package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEventJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{
			"tool call keeps the reference's shape",
			Event{Role: "coder", Tool: "file_read", ToolCallID: "c1", Status: "ok", DurationMS: 3, Bytes: 40},
			`{"role":"coder","tool":"file_read","tool_call_id":"c1","status":"ok","duration_ms":3,"bytes":40,"truncated":false}`,
		},
		{
			"repeated tool call says so",
			Event{Role: "coder", Tool: "file_read", ToolCallID: "c2", Status: "ok", Bytes: 40, Repeated: true},
			`{"role":"coder","tool":"file_read","tool_call_id":"c2","status":"ok","duration_ms":0,"bytes":40,"truncated":false,"repeated":true}`,
		},
		{
			"tool call from text says so",
			Event{Role: "coder", Tool: "file_read", ToolCallID: "t1", Status: "ok", Bytes: 9, FromText: true},
			`{"role":"coder","tool":"file_read","tool_call_id":"t1","status":"ok","duration_ms":0,"bytes":9,"truncated":false,"from_text":true}`,
		},
		{
			"model call has its own fields, zero counts included",
			Event{Kind: EventModelCall, Role: "planner", Turn: 1, Status: "ok", DurationMS: 12, DoneReason: "stop"},
			`{"kind":"model_call","role":"planner","cycle":0,"turn":1,"status":"ok","duration_ms":12,"bytes":0,"prompt_tokens":0,"completion_tokens":0,"done_reason":"stop","native_tool_calls":0,"text_tool_calls":0}`,
		},
		{
			"model call with the server's prompt evaluation time",
			Event{Kind: EventModelCall, Role: "coder", Turn: 1, Status: "ok", DurationMS: 900, PromptTokens: 1946, PromptEvalMS: 812, DoneReason: "stop"},
			`{"kind":"model_call","role":"coder","cycle":0,"turn":1,"status":"ok","duration_ms":900,"bytes":0,"prompt_tokens":1946,"completion_tokens":0,"done_reason":"stop","native_tool_calls":0,"text_tool_calls":0,"prompt_eval_ms":812}`,
		},
		{
			"model call with its prompt's size and new part",
			Event{Kind: EventModelCall, Role: "reviewer", Cycle: 1, Turn: 1, Status: "ok", PromptTokens: 2300, PromptChars: 9100, NewPromptChars: 1200},
			`{"kind":"model_call","role":"reviewer","cycle":1,"turn":1,"status":"ok","duration_ms":0,"bytes":0,"prompt_tokens":2300,"completion_tokens":0,"done_reason":"","native_tool_calls":0,"text_tool_calls":0,"prompt_chars":9100,"new_prompt_chars":1200}`,
		},
		{
			"model call error is not HTML-escaped",
			Event{Kind: EventModelCall, Role: "coder", Cycle: 2, Turn: 3, Status: "error", Error: "a <b> & c", PromptTokens: 9, CompletionTokens: 4, NativeToolCalls: 2},
			`{"kind":"model_call","role":"coder","cycle":2,"turn":3,"status":"error","error":"a <b> & c","duration_ms":0,"bytes":0,"prompt_tokens":9,"completion_tokens":4,"done_reason":"","native_tool_calls":2,"text_tool_calls":0}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := Marshal(tc.ev)
			if err != nil || string(b) != tc.want {
				t.Fatalf("Marshal(%+v) = %s, %v\nwant %s", tc.ev, b, err, tc.want)
			}
			var back Event
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Unmarshal(%s) = %v", b, err)
			}
			if diff := cmp.Diff(tc.ev, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
