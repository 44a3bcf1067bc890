package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/internal/test/ollamatest"
	"flow/runtime/report"
)

// TestToolCallsWrittenAsText runs a read-only planner whose model writes
// its calls as text, as small local models do: a fenced JSON call, a bare
// JSON call ending the reply, and text that only mentions a tool. The first
// two run exactly as native calls (each with its own id, counted, in the
// events marked from_text); the mention is the planner's answer.
func TestToolCallsWrittenAsText(t *testing.T) {
	cfg := testConfig(workspace(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"}))
	cfg.Trusted = false
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "I will read it.\n```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"a.go\"}}\n```"},
		ollamatest.Turn{Content: `Now the other one: {"name":"file_read","arguments":"{\"path\":\"b.go\"}"}`},
		ollamatest.Turn{Content: "1. Nothing to change; file_read showed both files."},
	)
	h, ct := countingHarness(t, cfg, srv)
	rep := h.run(t, "look at the files")

	if rep.Roles[0].Status != report.StatusOK || !strings.HasPrefix(rep.Summary, "1. Nothing to change") {
		t.Fatalf("planner %s %q, summary %q; want ok with the third reply as the plan", rep.Roles[0].Status, rep.Roles[0].Error, rep.Summary)
	}
	if ct.n["file_read"] != 2 || rep.ToolCalls != 2 {
		t.Fatalf("file_read ran %d times, tool_calls %d; want 2 and 2", ct.n["file_read"], rep.ToolCalls)
	}
	var ids []string
	for _, e := range toolEvents(rep) {
		if !e.FromText || e.Status != report.StatusOK {
			t.Errorf("tool event %+v, want ok and from_text", e)
		}
		ids = append(ids, e.ToolCallID)
	}
	if len(ids) != 2 || ids[0] == "" || ids[0] == ids[1] {
		t.Fatalf("tool call ids %q, want two distinct synthesised ids", ids)
	}
	var text, native []int
	for _, e := range rep.Events {
		if e.Kind == report.EventModelCall {
			text = append(text, e.TextToolCalls)
			native = append(native, e.NativeToolCalls)
		}
	}
	if diff := cmp.Diff([]int{1, 1, 0}, text); diff != "" {
		t.Errorf("model calls' text_tool_calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 0, 0}, native); diff != "" {
		t.Errorf("model calls' native_tool_calls (-want +got):\n%s", diff)
	}
	// The model got each result under the id flow gave the call.
	chats := chatRequests(srv)
	for i, id := range ids {
		m := lastMessage(chats[i+1])
		if m["role"] != "tool" || !strings.Contains(m["content"].(string), "package "+string(rune('a'+i))) {
			t.Errorf("message after text call %d = %v, want the tool result", i, m)
		}
		if got, _ := m["tool_call_id"].(string); got != "" && got != id {
			t.Errorf("tool result id %q, want %q", got, id)
		}
	}
}
