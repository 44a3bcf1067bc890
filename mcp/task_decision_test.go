package mcp

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"flow/runtime/report"
)

// The question after an unverified run, for a task (task_decision.go):
// tasks/result asks it, once per task; cancelling tasks/result withdraws
// it; a job holding the workspace leaves it unasked. The answered and
// collected case is cmd/flow/serve_elicit_tasks_test.go, over a real flow
// serve and its task worker.

// elicitingTaskClient starts a session of a server with a task store
// whose client declares form-mode elicitation, and makes one
// task-augmented flow_run; it returns the client and the task's id.
func elicitingTaskClient(t *testing.T, rt *fakeRuntime, opts Options) (*client, string) {
	t.Helper()
	c, _ := startTaskServer(t, rt, opts)
	c.handshakeAs("test", `{"elicitation":{"form":{}}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"t"},"task":{"ttl":60000}}}`)
	m, _ := c.recvID("1")
	id, _ := m["result"].(map[string]any)["task"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("task-augmented flow_run = %v", m)
	}
	return c, id
}

func taskResultLine(id any, taskID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/result","params":{"taskId":%q}}`, id, taskID)
}

// TestTaskResultAskedOnceAndCancelled: notifications/cancelled for the
// tasks/result withdraws its open question and the request gets no
// response; the question counts as asked, so the next tasks/result asks
// nothing and shows that nothing was decided. tasks/get never asks.
func TestTaskResultAskedOnceAndCancelled(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	c, id := elicitingTaskClient(t, decisionRuntime(false, log), Options{})
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":%q}}`, id))
	if m := c.recvMsg(); m["id"] != 2.0 {
		t.Fatalf("tasks/get = %v, want its reply and no question", m)
	}
	c.send(taskResultLine(3, id))
	q := c.recvMsg()
	if q["method"] != "elicitation/create" || !strings.Contains(fmt.Sprint(q["params"]), "run-1") {
		t.Fatalf("tasks/result's first message = %v, want the question", q)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	c.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"flow-1","reason":"the client cancelled the request"}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":4,"result":{}}`)
	waitFor(t, "the decision kept", func() bool {
		b, err := os.ReadFile(c.srv.decisionPath(id))
		return err == nil && len(b) > 0
	})
	c.send(taskResultLine(5, id))
	m := c.recvMsg()
	if m["id"] != 5.0 {
		t.Fatalf("second tasks/result's first message = %v, want its reply", m)
	}
	dec, _ := structured(t, m)["decision"].(map[string]any)
	if dec["answer"] != "none" || !strings.Contains(fmt.Sprint(dec["message"]), "the client cancelled the request") {
		t.Errorf("decision = %v, want none after the cancel", dec)
	}
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Errorf("lines after the last reply: %v", rest)
	}
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[] keep=[] revert=[]]" {
		t.Errorf("reviews = %s, want two lists and no decision", got)
	}
}

// TestTaskResultNotAskedWhileBusy: while a job holds the workspace the
// listing is busy: tasks/result asks nothing, says so in the decision and
// keeps nothing, so once the workspace is free the next one asks, and the
// answer is applied and shown again.
func TestTaskResultNotAskedWhileBusy(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	rt := decisionRuntime(false, log)
	var busy atomic.Bool
	review := rt.review
	rt.review = func(runID string, keep, revert []string) report.ReviewReport {
		if busy.Load() {
			return report.ReviewReport{Status: report.StatusBusy, Message: "busy: a run holds the workspace"}
		}
		return review(runID, keep, revert)
	}
	c, id := elicitingTaskClient(t, rt, Options{})
	waitFor(t, "the task's end", func() bool { return slotFree(c.srv) && c.srv.liveTask(id) == nil })
	busy.Store(true)
	c.send(taskResultLine(2, id))
	m := c.recvMsg()
	if m["id"] != 2.0 {
		t.Fatalf("tasks/result while busy: %v, want its reply and no question", m)
	}
	sc := structured(t, m)
	dec, _ := sc["decision"].(map[string]any)
	if dec["answer"] != "none" || dec["status"] != "busy" || !strings.HasPrefix(fmt.Sprint(dec["message"]), "Not asked: another job holds the workspace") {
		t.Errorf("decision while busy = %v", dec)
	}
	if hunks, _ := sc["hunks"].([]any); len(hunks) != 1 || hunks[0].(map[string]any)["state"] != "pending" {
		t.Errorf("hunks while busy = %v, want the stored pending hunk", sc["hunks"])
	}
	busy.Store(false)
	c.send(taskResultLine(3, id))
	q := c.recvMsg()
	if q["method"] != "elicitation/create" {
		t.Fatalf("tasks/result once free: %v, want the question", q)
	}
	c.send(`{"jsonrpc":"2.0","id":"flow-1","result":{"action":"accept","content":{"decision":"keep"}}}`)
	m, _ = c.recvID("3")
	first := asJSON(structured(t, m)["decision"])
	if !strings.Contains(first, `"answer":"keep"`) {
		t.Errorf("decision = %s, want keep", first)
	}
	c.send(taskResultLine(4, id))
	m = c.recvMsg()
	if m["id"] != 4.0 || asJSON(structured(t, m)["decision"]) != first {
		t.Errorf("third tasks/result = %v, want no question and decision %s", m, first)
	}
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[] keep=[] revert=[] keep=[all] revert=[]]" {
		t.Errorf("reviews = %s, want the run's list, the list once free, keep all", got)
	}
}

// TestTaskResultNotAskedWithoutElicitation: a client that declared no
// elicitation gets the stored result as it is.
func TestTaskResultNotAskedWithoutElicitation(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	c, _ := startTaskServer(t, decisionRuntime(false, log), Options{})
	c.handshakeAs("test", `{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"t"},"task":{"ttl":60000}}}`)
	m, _ := c.recvID("1")
	id, _ := m["result"].(map[string]any)["task"].(map[string]any)["taskId"].(string)
	c.send(taskResultLine(2, id))
	m = c.recvMsg()
	if m["id"] != 2.0 || structured(t, m)["decision"] != nil {
		t.Fatalf("tasks/result = %v, want the result without a decision", m)
	}
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[]]" {
		t.Errorf("reviews = %s, want only the run's list", got)
	}
}

// TestTaskResultQuestionTimeoutAndEOF: tasks/result's question is bound
// by the server's decision timeout, as a plain call's is, and at the end
// of input tasks/result is still answered, saying nothing was decided.
func TestTaskResultQuestionTimeoutAndEOF(t *testing.T) {
	t.Parallel()
	c, id := elicitingTaskClient(t, decisionRuntime(false, &reviewLog{}), Options{DecisionTimeout: 100 * time.Millisecond})
	c.send(taskResultLine(2, id))
	if q := c.recvMsg(); q["method"] != "elicitation/create" {
		t.Fatalf("first message = %v, want the question", q)
	}
	c.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"flow-1","reason":"flow waited 100ms for the answer"}}`)
	m, _ := c.recvID("2")
	if dec, _ := structured(t, m)["decision"].(map[string]any); dec["answer"] != "none" || !strings.Contains(fmt.Sprint(dec["message"]), "flow waited 100ms") {
		t.Errorf("decision = %v, want none after the timeout", dec)
	}

	c, id = elicitingTaskClient(t, decisionRuntime(false, &reviewLog{}), Options{})
	c.send(taskResultLine(2, id))
	if q := c.recvMsg(); q["method"] != "elicitation/create" {
		t.Fatalf("first message = %v, want the question", q)
	}
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	rest := c.rest()
	if len(rest) != 1 || !strings.Contains(rest[0], `"answer":"none"`) || !strings.Contains(rest[0], "input ended") {
		t.Errorf("after the end of input: %v, want tasks/result with nothing decided", rest)
	}
}
