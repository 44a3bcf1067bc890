package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestServeReviewListAndRevert: over a real flow serve, flow_review lists
// a scripted run's three hunks (the same object as flow review --list),
// reverts one (only its lines come back), and refuses an unknown hunk id
// with a tool error that writes nothing.
func TestServeReviewListAndRevert(t *testing.T) {
	t.Parallel()
	ws, cfg, env, runID := reviewedRun(t)
	p := startServe(t, ws, env, "--trusted", "-c", cfg)
	p.initialize()
	call := func(id int, args string) map[string]any {
		t.Helper()
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_review","arguments":%s}}`, id, args))
		r, _ := p.recvID(float64(id))
		return r["result"].(map[string]any)
	}
	res := call(1, `{"run_id":"`+runID+`"}`)
	sc := res["structuredContent"].(map[string]any)
	if res["isError"] != false || sc["run_id"] != runID || len(sc["hunks"].([]any)) != 3 {
		t.Fatalf("flow_review list = %v", res)
	}
	ids := hunkIDs(t, sc)
	before := readWS(t, ws, "a.txt")
	res = call(2, `{"run_id":"`+runID+`","revert":"nosuchhunk"}`)
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["structuredContent"]), "nosuchhunk") {
		t.Errorf("flow_review of an unknown id = %v, want a tool error naming it", res)
	}
	if readWS(t, ws, "a.txt") != before {
		t.Error("a refused review wrote a.txt")
	}
	res = call(3, `{"run_id":"`+runID+`","revert":"`+ids["TWENTY-FIVE"][0]+`"}`)
	if sc := res["structuredContent"].(map[string]any); res["isError"] != false || sc["status"] != "ok" {
		t.Fatalf("flow_review revert = %v", res)
	}
	if got, want := readWS(t, ws, "a.txt"), lines(30, map[int]string{3: "THREE"}); got != want {
		t.Errorf("a.txt = %q, want only line 25 back", got)
	}
	states := hunkIDs(t, call(4, `{"run_id":"`+runID+`"}`)["structuredContent"].(map[string]any))
	if states["TWENTY-FIVE"][1] != "reverted" || states["THREE"][1] != "pending" || states["TWO"][1] != "pending" {
		t.Errorf("states after the revert: %v", states)
	}
	res = call(5, `{"run_id":"no-such-run"}`)
	if res["isError"] != true {
		t.Errorf("flow_review of no such run = %v, want a tool error", res)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeRunListsHunks: flow_run's result over a real flow serve lists
// the hunks of its change, with ids flow_review accepts.
func TestServeRunListsHunks(t *testing.T) {
	t.Parallel()
	ws, cfg := reviewScript(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"edit"}}}`)
	r, _ := p.recvID(1)
	sc := r["result"].(map[string]any)["structuredContent"].(map[string]any)
	hunks, _ := sc["hunks"].([]any)
	if len(hunks) != 3 {
		t.Fatalf("flow_run result hunks = %v, want 3", sc["hunks"])
	}
	for _, h := range hunks {
		for _, k := range []string{"id", "path", "old_start", "old_lines", "new_start", "new_lines", "evidence"} {
			if _, ok := h.(map[string]any)[k]; !ok {
				t.Errorf("a hunk lacks %q: %v", k, h)
			}
		}
	}
	ids := hunkIDs(t, sc)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_review","arguments":{"run_id":"` + sc["run_id"].(string) + `","revert":"` + ids["TWO"][0] + `"}}}`)
	if r, _ := p.recvID(2); r["result"].(map[string]any)["isError"] != false {
		t.Fatalf("flow_review of flow_run's hunk = %v", r)
	}
	if got := readWS(t, ws, "b.txt"); got != lines(5, nil) {
		t.Errorf("b.txt = %q, want its old text", got)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}
