package main

import (
	"fmt"
	"strings"
	"testing"
)

// letterConfig is a workspace whose model server refuses connections (a
// run ends at once with an error report) and whose slow check, not
// required (so no run's baseline waits for it), runs until it is stopped.
func letterConfig(t *testing.T) (ws, cfg string) {
	ws = workspace(t)
	cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = "http://127.0.0.1:1"
[checks.slow]
cmd = ["sh", "-c", "echo $$ > check.pid; exec sleep 300"]
required = false
`)
	return ws, cfg
}

// TestServeInputErrorsAreToolResults: over a real flow serve, arguments
// that do not match a tool's schema come back as a tool result with
// isError that says which argument and what was expected, for a plain and
// a task-augmented call; a malformed call (an unknown tool, named in the
// error) stays a protocol error.
func TestServeInputErrorsAreToolResults(t *testing.T) {
	t.Parallel()
	ws, cfg := letterConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initTasks()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":3}}}`)
	r, _ := p.recvID(1)
	res, _ := r["result"].(map[string]any)
	rep := toolReport(t, r)
	want := `Invalid arguments for flow_run: argument "task" must be a string, got an integer; expected {"task": string`
	if res["isError"] != true || rep["status"] != "error" || !strings.HasPrefix(fmt.Sprint(rep["reason"]), want) {
		t.Fatalf("flow_run {task: 3} = %v, want an isError result saying %q", r, want)
	}
	if first := res["content"].([]any)[0].(map[string]any)["text"]; first != rep["reason"] {
		t.Errorf("the result's first text = %q, want the reason for a model to read", first)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":["slow"]},"task":{}}}`)
	r, _ = p.recvID(2)
	task, _ := r["result"].(map[string]any)["task"].(map[string]any)
	if task["status"] != "failed" {
		t.Fatalf("task-augmented flow_check {name: [slow]} = %v, want a failed task", r)
	}
	got := p.taskReq(3, "result", task["taskId"])["result"].(map[string]any)
	if got["isError"] != true || !strings.Contains(fmt.Sprint(got["structuredContent"]), `argument "name" must be a string, got an array`) {
		t.Fatalf("its tasks/result = %v, want the isError result", got)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"flow_rnu","arguments":{"task":"x"}}}`)
	if r, _ := p.recvID(4); errorCode(r) != -32602 || !strings.Contains(fmt.Sprint(r["error"]), `Unknown tool "flow_rnu"`) {
		t.Errorf("unknown tool = %v, want -32602 naming it", r)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeIdempotencyKeyReuse: over a real flow serve, a repeat of a
// submission returns its result, and the same key with another task is
// refused with an error naming the first submission, without a run.
func TestServeIdempotencyKeyReuse(t *testing.T) {
	t.Parallel()
	ws, cfg := letterConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A","idempotency_key":"k-7"}}}`)
	first, _ := p.recvID(1)
	runID := toolReport(t, first)["run_id"]
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_run","arguments":{"idempotency_key":"k-7","task":"add A"}}}`)
	again, _ := p.recvID(2)
	if mustJSON(again["result"]) != mustJSON(first["result"]) {
		t.Fatalf("repeat = %v, want the first result %v", again, first)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add B","idempotency_key":"k-7"}}}`)
	r, _ := p.recvID(3)
	rep := toolReport(t, r)
	if r["result"].(map[string]any)["isError"] != true || rep["status"] != "error" ||
		!strings.Contains(fmt.Sprint(rep["reason"]), `idempotency_key "k-7" was already used for another submission (flow_run {"task":"add A"}`) ||
		rep["run_id"] != nil {
		t.Fatalf("key reused with another task = %v, want a refusal naming the first submission", rep)
	}
	res := runFlow(t, ws, p.cmd.Env, "tasks", "-c", cfg, "--json")
	if strings.Count(res.stdout, `"tool":"flow_run"`) != 1 || !strings.Contains(res.stdout, fmt.Sprint(runID)) {
		t.Errorf("flow tasks = %s, want the one run %v", res.stdout, runID)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeCancelledTaskMessage: a task stopped by tasks/cancel says so
// once, with the report's reason.
func TestServeCancelledTaskMessage(t *testing.T) {
	t.Parallel()
	ws, cfg := letterConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initTasks()
	id := p.taskCall(1, "flow_check", `{"name":"slow"}`)["taskId"]
	checkPID(t, ws)
	r := p.taskReq(2, "cancel", id)["result"].(map[string]any)
	msg := fmt.Sprint(r["statusMessage"])
	if r["status"] != "cancelled" || msg != "cancelled: The check slow was cancelled before it finished" {
		t.Fatalf("tasks/cancel = %v, want cancelled with the check's reason once", r)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeNoTasksForOlderVersions: a 2025-06-18 session of a real flow
// serve is not offered tasks and cannot use them.
func TestServeNoTasksForOlderVersions(t *testing.T) {
	t.Parallel()
	ws, cfg := letterConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"tasks":{}},"clientInfo":{"name":"test","version":"1"}}}`)
	r, _ := p.recvID(0)
	if caps := r["result"].(map[string]any)["capabilities"].(map[string]any); caps["tasks"] != nil {
		t.Errorf("a 2025-06-18 session is offered tasks: %v", caps)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	r, _ = p.recvID(1)
	if s := mustJSON(r["result"]); strings.Contains(s, "execution") || strings.Contains(s, "taskSupport") {
		t.Errorf("tools/list in a 2025-06-18 session mentions tasks: %s", s)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"slow"},"task":{}}}`)
	if r, _ := p.recvID(2); errorCode(r) != -32602 {
		t.Errorf("a task-augmented call in a 2025-06-18 session = %v, want -32602", r)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`)
	if r, _ := p.recvID(3); errorCode(r) != -32601 {
		t.Errorf("tasks/list in a 2025-06-18 session = %v, want -32601", r)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}
