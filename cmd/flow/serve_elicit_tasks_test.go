package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The question after an unverified run, for a task (doc/design.md
// §10.12): a task-augmented flow_run runs in its worker, which cannot ask;
// tasks/result from a client that declared form-mode elicitation asks
// instead, once per task, and every later tasks/result, from this server
// or another, shows the same decision.

// awaitTask polls tasks/get for the task until it has ended, and fails if
// the server sends a request of its own meanwhile (tasks/get never asks).
func awaitTask(t *testing.T, p *mcpProc, id string, nextID *float64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		*nextID++
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/get","params":{"taskId":%q}}`, *nextID, id))
		req, reply := p.nextCallOrRequest(*nextID)
		if req != nil {
			t.Fatalf("tasks/get: the server sent %v", req)
		}
		if st := reply["result"].(map[string]any)["status"]; st != "working" {
			if st != "completed" && st != "failed" {
				t.Fatalf("task ended %v: %v", st, reply)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("task %s still working after 2 minutes", id)
}

// taskResultNoQuestion sends tasks/result and returns the run report of
// its reply, failing if the server asks anything first.
func taskResultNoQuestion(t *testing.T, p *mcpProc, reqID float64, taskID string) map[string]any {
	t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/result","params":{"taskId":%q}}`, reqID, taskID))
	req, reply := p.nextCallOrRequest(reqID)
	if req != nil {
		t.Fatalf("tasks/result %v: the server asked %v", reqID, req)
	}
	return runReport(t, reply)
}

// TestServeElicitTaskResultRevert: the task's tasks/result asks, the
// answer revert goes through the review, and the decision is kept: a
// second tasks/result, and one from a new server, ask nothing and show it.
func TestServeElicitTaskResultRevert(t *testing.T) {
	t.Parallel()
	ws, cfg := unverifiedScript(t)
	environ := hermeticEnv(t)
	p := startServe(t, ws, environ, "--trusted", "-c", cfg)
	p.initializeWith("2025-11-25", `{"elicitation":{"form":{}},"tasks":{}}`)
	id := p.taskCall(1, "flow_run", `{"task":"edit"}`)["taskId"].(string)
	next := float64(10)
	awaitTask(t, p, id, &next)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	req, reply := p.nextCallOrRequest(2)
	if req == nil || req["method"] != "elicitation/create" {
		t.Fatalf("tasks/result answered without asking: %v", reply)
	}
	answer(t, p, req, `"result":{"action":"accept","content":{"decision":"revert"}}`)
	_, reply = p.nextCallOrRequest(2)
	res := reply["result"].(map[string]any)
	if rel, _ := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
		t.Errorf("tasks/result _meta = %v", res["_meta"])
	}
	run := runReport(t, reply)
	checkQuestion(t, req, run)
	dec, _ := run["decision"].(map[string]any)
	if dec["answer"] != "revert" || dec["status"] != "ok" || !strings.Contains(fmt.Sprint(dec["message"]), "reverted 3") {
		t.Errorf("decision = %v, want revert applied to the 3 hunks", run["decision"])
	}
	if got := fmt.Sprint(hunkStates(t, run)); got != "[reverted reverted reverted]" {
		t.Errorf("result's hunks = %s, want all reverted", got)
	}
	if text := res["content"].([]any); !strings.Contains(fmt.Sprint(text[len(text)-1]), `"decision"`) {
		t.Errorf("the result's text lacks the decision: %v", text)
	}
	if readWS(t, ws, "a.txt") != lines(30, nil) || readWS(t, ws, "b.txt") != lines(5, nil) {
		t.Errorf("a.txt %q, b.txt %q: want their old text", readWS(t, ws, "a.txt"), readWS(t, ws, "b.txt"))
	}
	if got := fmt.Sprint(reviewStates(t, p, 3, run["run_id"].(string))); got != "[reverted reverted reverted]" {
		t.Errorf("flow_review states = %s, want all reverted", got)
	}
	again := taskResultNoQuestion(t, p, 4, id)
	if got, want := mustJSON(again["decision"]), mustJSON(run["decision"]); got != want {
		t.Errorf("second tasks/result decision = %s, want %s", got, want)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}

	q := startServe(t, ws, environ, "--trusted", "-c", cfg)
	q.initializeWith("2025-11-25", `{"elicitation":{"form":{}},"tasks":{}}`)
	later := taskResultNoQuestion(t, q, 1, id)
	if got, want := mustJSON(later["decision"]), mustJSON(run["decision"]); got != want {
		t.Errorf("new server's tasks/result decision = %s, want %s", got, want)
	}
	if got := fmt.Sprint(hunkStates(t, later)); got != "[reverted reverted reverted]" {
		t.Errorf("new server's hunks = %s, want all reverted", got)
	}
	if code := q.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, q.stderr)
	}
}

// TestServeElicitTaskResultNoCapability: a client without form-mode
// elicitation is never asked: tasks/result is the worker's result, without
// a decision, and the hunks stay pending.
func TestServeElicitTaskResultNoCapability(t *testing.T) {
	t.Parallel()
	ws, cfg := unverifiedScript(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initializeWith("2025-11-25", `{"tasks":{}}`)
	id := p.taskCall(1, "flow_run", `{"task":"edit"}`)["taskId"].(string)
	next := float64(10)
	awaitTask(t, p, id, &next)
	run := taskResultNoQuestion(t, p, 2, id)
	if run["verified"] != false || len(run["changed_files"].([]any)) != 2 {
		t.Fatalf("tasks/result = %v, want an unverified change of two files", run)
	}
	if _, ok := run["decision"]; ok {
		t.Errorf("result has a decision without a question: %v", run["decision"])
	}
	if got := fmt.Sprint(hunkStates(t, run)); got != "[pending pending pending]" {
		t.Errorf("result's hunks = %s, want all pending", got)
	}
	if got := fmt.Sprint(reviewStates(t, p, 3, run["run_id"].(string))); got != "[pending pending pending]" {
		t.Errorf("flow_review states = %s, want all pending", got)
	}
	if readWS(t, ws, "b.txt") != lines(5, map[int]string{2: "TWO"}) {
		t.Errorf("b.txt = %q, want the run's change", readWS(t, ws, "b.txt"))
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
	for _, l := range p.all {
		if strings.Contains(l, "elicitation/create") {
			t.Errorf("stdout has an elicitation request: %s", l)
		}
	}
}
