package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// The question after an unverified run (doc/design.md §10.12), over a
// real flow serve: a client that declared form-mode elicitation is asked
// with elicitation/create whether to keep or revert the change, and its
// answer goes through flow_review's code; a client without it is never
// asked.

// unverifiedScript returns a workspace and a configuration whose scripted
// run changes two places of a.txt and one of b.txt and ends unverified:
// its one check passes before and after the change, and nothing declares
// the task behaviour-preserving, so no check shows the change.
func unverifiedScript(t *testing.T) (ws, cfg string) {
	t.Helper()
	ws = workspace(t)
	writeFile(t, ws, "a.txt", lines(30, nil))
	writeFile(t, ws, "b.txt", lines(5, nil))
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			write("1", "a.txt", lines(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"})),
			write("2", "b.txt", lines(5, map[int]string{2: "TWO"})),
		}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always"
max_cycles = 1
[checks.lint]
cmd = ["true"]
kind = "lint"
filetypes = ["*"]
`)
	return ws, cfg
}

// initializeWith opens the session as a client of version that declares
// caps (a JSON object).
func (p *mcpProc) initializeWith(version, caps string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"elicit-test","version":"1"}}}`)
	r, _ := p.recvID(0)
	if v := r["result"].(map[string]any)["protocolVersion"]; v != version {
		p.t.Fatalf("negotiated version = %v, want %s", v, version)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// nextCallOrRequest skips notifications and returns either the server's
// request (a message with method and id) or the reply to id.
func (p *mcpProc) nextCallOrRequest(id float64) (request, reply map[string]any) {
	p.t.Helper()
	for {
		m := p.recv()
		_, hasID := m["id"]
		switch {
		case !hasID:
			continue
		case m["method"] != nil:
			return m, nil
		case m["id"] == id:
			return nil, m
		default:
			p.t.Fatalf("message with id %v while waiting for %v: %v", m["id"], id, m)
		}
	}
}

// runUntilQuestion calls flow_run and returns the elicitation/create
// request the server sends before its result.
func runUntilQuestion(t *testing.T, p *mcpProc) map[string]any {
	t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"edit"}}}`)
	req, reply := p.nextCallOrRequest(1)
	if req == nil {
		t.Fatalf("flow_run answered without asking: %v", reply)
	}
	if req["method"] != "elicitation/create" {
		t.Fatalf("server request = %v, want elicitation/create", req)
	}
	return req
}

// checkQuestion checks the question's form and that its message names the
// run, the changed files and the report's reason.
func checkQuestion(t *testing.T, req map[string]any, run map[string]any) {
	t.Helper()
	params := req["params"].(map[string]any)
	msg, _ := params["message"].(string)
	t.Logf("question: %s\ndecision: %v", mustJSON(params), run["decision"])
	reason, _ := run["reason"].(string)
	for _, want := range []string{run["run_id"].(string), "a.txt", "b.txt", strings.TrimSuffix(reason, ".")} {
		if want == "" || !strings.Contains(msg, want) {
			t.Errorf("question message %q lacks %q", msg, want)
		}
	}
	if n := strings.Count(msg, ". ") + strings.Count(msg, "? "); n > 2 {
		t.Errorf("question message has %d sentences, want one or two: %q", n+1, msg)
	}
	if mode, ok := params["mode"]; ok && mode != "form" {
		t.Errorf("mode = %v, want form or absent", mode)
	}
	schema := params["requestedSchema"].(map[string]any)
	props := schema["properties"].(map[string]any)
	if schema["type"] != "object" || len(props) != 1 || fmt.Sprint(schema["required"]) != "[decision]" {
		t.Fatalf("requestedSchema = %v, want one required property decision", schema)
	}
	d := props["decision"].(map[string]any)
	if d["type"] != "string" || fmt.Sprint(d["enum"]) != "[keep revert later]" {
		t.Errorf("decision schema = %v, want a string enum of keep, revert and later", d)
	}
}

// answer sends the client's response to the server's request req, whose
// member is `"result": …` or `"error": …`.
func answer(t *testing.T, p *mcpProc, req map[string]any, member string) {
	t.Helper()
	id, _ := json.Marshal(req["id"])
	p.send(`{"jsonrpc":"2.0","id":` + string(id) + `,` + member + `}`)
}

// reviewStates lists the run's hunks over flow_review and returns their
// states, sorted.
func reviewStates(t *testing.T, p *mcpProc, id int, runID string) []string {
	t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_review","arguments":{"run_id":%q}}}`, id, runID))
	r, _ := p.recvID(float64(id))
	return hunkStates(t, runReport(t, r))
}

func runReport(t *testing.T, reply map[string]any) map[string]any {
	t.Helper()
	return reply["result"].(map[string]any)["structuredContent"].(map[string]any)
}

// TestServeElicitRevert: a 2025-11-25 client declaring form elicitation
// is asked after an unverified run and answers revert: every hunk is
// reverted through the review, the files are back, and the run's result
// says so.
func TestServeElicitRevert(t *testing.T) {
	t.Parallel()
	ws, cfg := unverifiedScript(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initializeWith("2025-11-25", `{"elicitation":{"form":{}}}`)
	req := runUntilQuestion(t, p)
	answer(t, p, req, `"result":{"action":"accept","content":{"decision":"revert"}}`)
	_, reply := p.nextCallOrRequest(1)
	run := runReport(t, reply)
	checkQuestion(t, req, run)
	if run["verified"] != false || run["status"] == "ok" {
		t.Fatalf("the scripted run is verified: %v", run)
	}
	dec, _ := run["decision"].(map[string]any)
	if dec["answer"] != "revert" || dec["status"] != "ok" || !strings.Contains(fmt.Sprint(dec["message"]), "reverted 3") {
		t.Errorf("decision = %v, want revert applied to the 3 hunks", run["decision"])
	}
	if got := fmt.Sprint(hunkStates(t, run)); got != "[reverted reverted reverted]" {
		t.Errorf("result's hunks = %s, want all reverted", got)
	}
	if readWS(t, ws, "a.txt") != lines(30, nil) || readWS(t, ws, "b.txt") != lines(5, nil) {
		t.Errorf("a.txt %q, b.txt %q: want their old text", readWS(t, ws, "a.txt"), readWS(t, ws, "b.txt"))
	}
	if got := fmt.Sprint(reviewStates(t, p, 2, run["run_id"].(string))); got != "[reverted reverted reverted]" {
		t.Errorf("flow_review states = %s, want all reverted", got)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeElicitKeep: a 2025-06-18 client declaring elicitation as {}
// (form mode) answers keep: the files keep the change and every hunk is
// kept.
func TestServeElicitKeep(t *testing.T) {
	t.Parallel()
	ws, cfg := unverifiedScript(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initializeWith("2025-06-18", `{"elicitation":{}}`)
	req := runUntilQuestion(t, p)
	answer(t, p, req, `"result":{"action":"accept","content":{"decision":"keep"}}`)
	_, reply := p.nextCallOrRequest(1)
	run := runReport(t, reply)
	checkQuestion(t, req, run)
	if dec, _ := run["decision"].(map[string]any); dec["answer"] != "keep" || dec["status"] != "ok" {
		t.Errorf("decision = %v, want keep applied", run["decision"])
	}
	if readWS(t, ws, "a.txt") != lines(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"}) || readWS(t, ws, "b.txt") != lines(5, map[int]string{2: "TWO"}) {
		t.Errorf("a.txt %q, b.txt %q: want the run's change", readWS(t, ws, "a.txt"), readWS(t, ws, "b.txt"))
	}
	if got := fmt.Sprint(reviewStates(t, p, 2, run["run_id"].(string))); got != "[kept kept kept]" {
		t.Errorf("flow_review states = %s, want all kept", got)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeElicitLaterWritesNothing: later, decline, cancel and an error
// response decide nothing: the change stays, the hunks stay pending, and the result says
// nothing was decided.
func TestServeElicitLaterWritesNothing(t *testing.T) {
	t.Parallel()
	for name, member := range map[string]string{
		"later":   `"result":{"action":"accept","content":{"decision":"later"}}`,
		"decline": `"result":{"action":"decline"}`,
		"cancel":  `"result":{"action":"cancel"}`,
		"error":   `"error":{"code":-32600,"message":"no dialog"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws, cfg := unverifiedScript(t)
			p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
			p.initializeWith("2025-11-25", `{"elicitation":{"form":{}}}`)
			req := runUntilQuestion(t, p)
			answer(t, p, req, member)
			_, reply := p.nextCallOrRequest(1)
			run := runReport(t, reply)
			dec, _ := run["decision"].(map[string]any)
			if dec == nil || dec["status"] != nil || !strings.HasPrefix(fmt.Sprint(dec["message"]), "Nothing was decided") {
				t.Errorf("decision = %v, want nothing decided", run["decision"])
			}
			if readWS(t, ws, "b.txt") != lines(5, map[int]string{2: "TWO"}) {
				t.Errorf("b.txt = %q, want the run's change", readWS(t, ws, "b.txt"))
			}
			if got := fmt.Sprint(reviewStates(t, p, 2, run["run_id"].(string))); got != "[pending pending pending]" {
				t.Errorf("flow_review states = %s, want all pending", got)
			}
			if code := p.exit(); code != 0 {
				t.Errorf("exit %d, stderr %q", code, p.stderr)
			}
		})
	}
}

// TestServeElicitNoAnswerAtEOF: a client that closes its input while the
// question is open still gets the run's result, saying nothing was
// decided, and nothing is written.
func TestServeElicitNoAnswerAtEOF(t *testing.T) {
	t.Parallel()
	ws, cfg := unverifiedScript(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initializeWith("2025-11-25", `{"elicitation":{"form":{}}}`)
	runUntilQuestion(t, p)
	p.stdin.Close()
	_, reply := p.nextCallOrRequest(1)
	run := runReport(t, reply)
	if dec, _ := run["decision"].(map[string]any); dec["answer"] != "none" || !strings.HasPrefix(fmt.Sprint(dec["message"]), "Nothing was decided") {
		t.Errorf("decision = %v, want none, nothing decided", run["decision"])
	}
	if readWS(t, ws, "b.txt") != lines(5, map[int]string{2: "TWO"}) {
		t.Errorf("b.txt = %q, want the run's change", readWS(t, ws, "b.txt"))
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeElicitNotAskedWithoutCapability: clients that did not declare
// form-mode elicitation (none at all, or URL mode only) are never sent
// elicitation/create; the run's result is as before, its hunks pending.
func TestServeElicitNotAskedWithoutCapability(t *testing.T) {
	t.Parallel()
	for name, caps := range map[string]string{"none": `{}`, "url only": `{"elicitation":{"url":{}}}`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws, cfg := unverifiedScript(t)
			p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
			p.initializeWith("2025-11-25", caps)
			p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"edit"}}}`)
			req, reply := p.nextCallOrRequest(1)
			if req != nil {
				t.Fatalf("the server sent %v to a client without form elicitation", req)
			}
			run := runReport(t, reply)
			if run["verified"] != false || len(run["changed_files"].([]any)) != 2 {
				t.Fatalf("flow_run = %v, want an unverified change of two files", run)
			}
			if _, ok := run["decision"]; ok {
				t.Errorf("result has a decision without a question: %v", run["decision"])
			}
			if got := fmt.Sprint(hunkStates(t, run)); got != "[pending pending pending]" {
				t.Errorf("result's hunks = %s, want all pending", got)
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
		})
	}
}

// hunkStates returns the states of a report's hunks, sorted.
func hunkStates(t *testing.T, m map[string]any) []string {
	t.Helper()
	var states []string
	for _, v := range hunkIDs(t, m) {
		states = append(states, v[1])
	}
	slices.Sort(states)
	return states
}
