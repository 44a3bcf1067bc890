package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"flow/runtime/report"
)

// The question after an unverified run, in the session (doc/design.md
// §10.12): what happens when it is not answered in time, when the call is
// cancelled while it is open, to a late answer, and to a verified run.
// cmd/flow/serve_elicit_test.go answers it over a real flow serve.

// reviewLog records the decisions a fake runtime's Review was asked for.
type reviewLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *reviewLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// decisionRuntime is a runtime whose run leaves a change of a.go with one
// hunk, verified or not, and whose Review records its decisions.
func decisionRuntime(verified bool, log *reviewLog) *fakeRuntime {
	f := &fakeRuntime{}
	f.run = func(_ context.Context, task string, _ func(string)) report.Run {
		rep := report.Run{Status: report.StatusUnverified, Task: task, RunID: "run-1", ChangedFiles: []string{"a.go"},
			Reason: "No check shows the change."}
		if verified {
			rep.Status, rep.Verified, rep.Reason = report.StatusOK, true, ""
		}
		return rep
	}
	f.review = func(runID string, keep, revert []string) report.ReviewReport {
		log.mu.Lock()
		log.calls = append(log.calls, fmt.Sprintf("keep=%v revert=%v", keep, revert))
		log.mu.Unlock()
		state := report.HunkPending
		switch {
		case len(keep) > 0:
			state = report.HunkKept
		case len(revert) > 0:
			state = report.HunkReverted
		}
		return report.ReviewReport{Status: report.StatusOK, RunID: runID, Message: "reviewed",
			Hunks: []report.Hunk{{ID: "h1", Path: "a.go", State: state}}}
	}
	return f
}

// elicitingClient starts a session of srv whose client declares form-mode
// elicitation.
func elicitingClient(t *testing.T, srv *Server) *client {
	t.Helper()
	c := startSession(t, context.Background(), srv)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"test","version":"1"}}}`)
	if m := c.recvMsg(); m["result"] == nil {
		t.Fatalf("initialize failed: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// TestElicitTimeout: a question that is not answered in time is withdrawn
// with notifications/cancelled, the result says nothing was decided, and a
// late answer is dropped without a reply or a review.
func TestElicitTimeout(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	srv := NewServer(decisionRuntime(false, log), Options{Version: "test", DecisionTimeout: 100 * time.Millisecond})
	c := elicitingClient(t, srv)
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	q := c.recvMsg()
	if q["method"] != "elicitation/create" || q["id"] != "flow-1" {
		t.Fatalf("first message = %v, want elicitation/create flow-1", q)
	}
	if msg := q["params"].(map[string]any)["message"].(string); !strings.Contains(msg, "run-1") || !strings.Contains(msg, "a.go") || !strings.Contains(msg, "No check shows the change.") {
		t.Errorf("question = %q, want the run, its file and its reason", msg)
	}
	c.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"flow-1","reason":"flow waited 100ms for the answer"}}`)
	res := c.recvMsg()
	dec, _ := res["result"].(map[string]any)["structuredContent"].(map[string]any)["decision"].(map[string]any)
	if res["id"] != 1.0 || dec["answer"] != "none" || !strings.Contains(fmt.Sprint(dec["message"]), "Nothing was decided: the question got no answer (flow waited 100ms") {
		t.Fatalf("result = %v, want nothing decided after the wait", res)
	}
	c.send(`{"jsonrpc":"2.0","id":"flow-1","result":{"action":"accept","content":{"decision":"revert"}}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[]]" {
		t.Errorf("reviews = %s, want only the list", got)
	}
}

// TestElicitCallCancelled: notifications/cancelled for the flow_run while
// its question is open withdraws the question, and the call gets no
// response, as any cancelled call.
func TestElicitCallCancelled(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	c := elicitingClient(t, NewServer(decisionRuntime(false, log), Options{Version: "test"}))
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	if q := c.recvMsg(); q["method"] != "elicitation/create" {
		t.Fatalf("first message = %v, want elicitation/create", q)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if m := c.recvMsg(); m["method"] != "notifications/cancelled" || m["params"].(map[string]any)["requestId"] != "flow-1" {
		t.Fatalf("after the cancel: %v, want the question withdrawn", m)
	}
	waitFor(t, "the call's end", func() bool { return slotFree(c.srv) })
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Errorf("lines after the cancel: %v", rest)
	}
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[]]" {
		t.Errorf("reviews = %s, want only the list", got)
	}
}

// TestElicitKeepAndVerified: keep reviews every hunk as kept; a verified
// run is not asked about.
func TestElicitKeepAndVerified(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	c := elicitingClient(t, NewServer(decisionRuntime(false, log), Options{Version: "test"}))
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	q := c.recvMsg()
	if q["method"] != "elicitation/create" {
		t.Fatalf("first message = %v, want elicitation/create", q)
	}
	c.send(`{"jsonrpc":"2.0","id":"flow-1","result":{"action":"accept","content":{"decision":"keep"}}}`)
	res := c.recvMsg()
	sc := res["result"].(map[string]any)["structuredContent"].(map[string]any)
	dec, _ := sc["decision"].(map[string]any)
	hunks, _ := sc["hunks"].([]any)
	if dec["answer"] != "keep" || dec["status"] != "ok" || dec["message"] != "reviewed" || len(hunks) != 1 || hunks[0].(map[string]any)["state"] != "kept" {
		t.Errorf("result = %v, want keep applied", sc)
	}
	if got := fmt.Sprint(log.list()); got != "[keep=[] revert=[] keep=[all] revert=[]]" {
		t.Errorf("reviews = %s, want the list, then keep all", got)
	}

	c = elicitingClient(t, NewServer(decisionRuntime(true, &reviewLog{}), Options{Version: "test"}))
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	if m := c.recvMsg(); m["id"] != 1.0 || m["result"].(map[string]any)["structuredContent"].(map[string]any)["decision"] != nil {
		t.Errorf("a verified run's first message = %v, want its result without a decision", m)
	}
}

// TestElicitWithinWait: a plain call with wait_seconds still answers
// within its wait: the question is withdrawn when the wait runs out, and
// the result says so; the task's record holds the same result.
func TestElicitWithinWait(t *testing.T) {
	t.Parallel()
	log := &reviewLog{}
	srv := NewServer(decisionRuntime(false, log), Options{Version: "test", Tasks: newTaskStore(t)})
	c := elicitingClient(t, srv)
	c.send(callLine(1, "flow_run", map[string]any{"task": "t", "wait_seconds": 1}, nil))
	if q := c.recvMsg(); q["method"] != "elicitation/create" {
		t.Fatalf("first message = %v, want elicitation/create", q)
	}
	// The frame loop goes on while the question is open, and the run's
	// record says what it waits for.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_status","arguments":{"run_id":"run-1"}}}`)
	open := c.recvMsg()["result"].(map[string]any)["structuredContent"].(map[string]any)
	if open["status"] != "running" || !strings.Contains(fmt.Sprint(open["progress"]), "waiting for the person") {
		t.Errorf("flow_status {run_id} while the question is open = %v", open)
	}
	c.expect(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"flow-1","reason":"the call's wait of 1s ran out"}}`)
	res := c.recvMsg()
	dec, _ := res["result"].(map[string]any)["structuredContent"].(map[string]any)["decision"].(map[string]any)
	if res["id"] != 1.0 || dec["answer"] != "none" || !strings.Contains(fmt.Sprint(dec["message"]), "wait of 1s ran out") {
		t.Fatalf("result = %v, want nothing decided within the wait", res)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_status","arguments":{"run_id":"run-1"}}}`)
	st := c.recvMsg()
	if d, _ := st["result"].(map[string]any)["structuredContent"].(map[string]any)["decision"].(map[string]any); d["answer"] != "none" {
		t.Errorf("flow_status {run_id} = %v, want the recorded result with its decision", st)
	}
}

// TestElicitNotAskedAfterCancel: a run cancelled by its client asks
// nothing, even when it leaves an unverified change.
func TestElicitNotAskedAfterCancel(t *testing.T) {
	t.Parallel()
	rt := decisionRuntime(false, &reviewLog{})
	started := make(chan struct{})
	rt.run = func(ctx context.Context, task string, _ func(string)) report.Run {
		close(started)
		<-ctx.Done()
		return report.Run{Status: report.StatusCancelled, Task: task, RunID: "run-1", ChangedFiles: []string{"a.go"}, Reason: "The run was cancelled."}
	}
	listed := make(chan struct{}, 1)
	review := rt.review
	rt.review = func(runID string, keep, revert []string) report.ReviewReport {
		defer func() { listed <- struct{}{} }()
		return review(runID, keep, revert)
	}
	c := elicitingClient(t, NewServer(rt, Options{Version: "test"}))
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	<-listed // the run's hunks are read: the question would follow at once
	time.Sleep(50 * time.Millisecond)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Errorf("lines after the cancel: %v", rest)
	}
}
