package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"flow/internal/test/ollamatest/live"
	"flow/runtime/agent"
)

// The tests of this file run `flow run` against a real Ollama with a
// stand-in model as the planner, one per shape of reply small local models
// send (live.Models), on both APIs. The planner is the first role, its
// tools are read-only, and a planner that does not finish ok ends the run,
// so each run is a few model calls whose every step is in the report.

// liveAPIs are the two APIs a run can use against Ollama.
var liveAPIs = []string{"native", "openai"}

// liveCalcGo is the workspace file the stand-in models read.
const liveCalcGo = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"

// livePlannerRun runs a task in a workspace holding files with planner as
// the planner's model (the other roles get the verdict model, which they
// never reach unless the planner finishes), api, and the given [ollama]
// and [agent] lines, and returns the decoded report. The tools are
// declared natively unless agentLines says otherwise: these tests are
// about what the server hands the client, and for the tiny stand-in models
// agent.tool_declarations = "auto" would declare them as text.
func livePlannerRun(t *testing.T, srv *live.Server, api, planner string, files map[string]string, ollamaLines, agentLines string) map[string]any {
	t.Helper()
	if !strings.Contains(agentLines, "tool_declarations") {
		agentLines += "\ntool_declarations = \"native\""
	}
	ws := workspace(t)
	for name, content := range files {
		writeFile(t, ws, name, content)
	}
	cfg := liveConfig(t, ws, srv, "api = "+tomlString(api)+"\nmodel = "+tomlString(live.ModelVerdict.Name)+"\n"+ollamaLines+
		"\n[models]\nplanner = "+tomlString(planner)+"\n[agent]\nplanner = \"always\"\nmax_cycles = 1\n"+agentLines)
	r := runFlow(t, ws, hermeticEnv(t), "run", "--trusted", "-c", cfg, "Check that Add adds.")
	m := decode(t, r)
	if r.code != 1 {
		t.Errorf("flow run exit code = %d, want 1 (the planner cannot finish ok)", r.code)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("report:\n%s\nstderr: %s", r.stdout, r.stderr)
		}
	})
	return m
}

// liveEvents returns the report's events of role: the model calls and the
// tool calls, in order.
func liveEvents(m map[string]any, role string) (calls, tools []map[string]any) {
	evs, _ := m["events"].([]any)
	for _, x := range evs {
		e, _ := x.(map[string]any)
		if e["role"] != role {
			continue
		}
		if e["kind"] == "model_call" {
			calls = append(calls, e)
		} else {
			tools = append(tools, e)
		}
	}
	return calls, tools
}

// liveRole returns the report's entry for role, or nil.
func liveRole(m map[string]any, role string) map[string]any {
	roles, _ := m["roles"].([]any)
	for _, x := range roles {
		if r, _ := x.(map[string]any); r["role"] == role {
			return r
		}
	}
	return nil
}

// TestLiveToolCallRows runs each reply shape that carries a tool call
// through flow and a real Ollama on both APIs, and checks that the planner
// executed it on its first turn, as the table of what the server hands the
// client requires: one <tool_call> block, two blocks (both run, each with
// its own arguments: calc.go is read, calc_test.go does not exist and is a
// tool error), arguments written as a JSON string, and a call written as
// text outside the tags, fenced or bare (run as a tool call with an id of
// its own and from_text in the event, counted as a text tool call). The
// model repeats the same call on the second turn, which is answered as a
// repeat, and the planner ends on its iteration budget. With the tools
// declared as text (agent.tool_declarations = "text": no tools field, so
// the server parses no call), every shape is read from the reply's text,
// the <tool_call> blocks too.
func TestLiveToolCallRows(t *testing.T) {
	srv := live.Start(t)
	tests := []struct {
		model live.Model
		// want is the statuses of the first turn's tool calls, in order.
		want     []string
		fromText bool
	}{
		{live.ModelCall, []string{"ok"}, false},
		{live.ModelTwoCalls, []string{"ok", "error"}, false},
		{live.ModelStringArgs, []string{"ok"}, false},
		{live.ModelFenced, []string{"ok"}, true},
		{live.ModelBare, []string{"ok"}, true},
	}
	for _, tc := range tests {
		for _, api := range liveAPIs {
			for _, decl := range []string{"native", "text"} {
				t.Run(tc.model.Name+"/"+api+"/"+decl, func(t *testing.T) {
					liveToolCallRow(t, srv, api, decl, tc.model, tc.want, tc.fromText || decl == "text")
				})
			}
		}
	}
}

// liveToolCallRow is one case of TestLiveToolCallRows.
func liveToolCallRow(t *testing.T, srv *live.Server, api, decl string, model live.Model, statuses []string, fromText bool) {
	m := livePlannerRun(t, srv, api, model.Name, map[string]string{"calc.go": liveCalcGo}, "", "max_iterations = 2\ntool_declarations = "+tomlString(decl))
	if ef, _ := m["edit_format"].(map[string]any); ef["tools"] != decl {
		t.Errorf("edit_format = %v, want tools %q", m["edit_format"], decl)
	}
	calls, tools := liveEvents(m, "planner")
	if len(calls) != 2 {
		t.Fatalf("planner model calls = %d, want 2 (max_iterations)", len(calls))
	}
	n := float64(len(statuses))
	native, text := n, 0.0
	if fromText {
		native, text = 0, n
	}
	for i, c := range calls {
		if c["native_tool_calls"] != native || c["text_tool_calls"] != text || c["status"] != "ok" {
			t.Errorf("model call %d = %v, want %v native and %v text tool calls", i+1, c, native, text)
		}
		if p, _ := c["prompt_tokens"].(float64); p <= 0 {
			t.Errorf("model call %d has no prompt_tokens from the server: %v", i+1, c)
		}
	}
	if len(tools) != 2*len(statuses) {
		t.Fatalf("planner tool events = %d, want %d (the first turn's calls, then their repeats)", len(tools), 2*len(statuses))
	}
	ids := map[string]bool{}
	for i, e := range tools {
		first := i < len(statuses)
		want := statuses[i%len(statuses)]
		id, _ := e["tool_call_id"].(string)
		if e["tool"] != "file_read" || e["status"] != want || id == "" || ids[id] {
			t.Errorf("tool event %d = %v, want file_read %s with an id of its own", i+1, e, want)
		}
		ids[id] = true
		if rep := e["repeated"] == true; rep == first {
			t.Errorf("tool event %d repeated = %v, want %v (turn %d)", i+1, rep, !first, 1+i/len(statuses))
		}
		if ft := e["from_text"] == true; ft != fromText {
			t.Errorf("tool event %d from_text = %v, want %v", i+1, ft, fromText)
		}
	}
	if b, _ := tools[0]["bytes"].(float64); int(b) < len(liveCalcGo) {
		t.Errorf("the first call's result is %v bytes, want calc.go's %d bytes of content in it", b, len(liveCalcGo))
	}
	if p := liveRole(m, "planner"); p["status"] != "unverified" || p["error"] != agent.MsgIterationBudget {
		t.Errorf("planner = %v, want unverified on its iteration budget", p)
	}
	if liveRole(m, "coder") != nil {
		t.Errorf("the coder ran after a planner that did not finish: %v", m["roles"])
	}
}

// TestLiveEmptyReply: a <tool_call> block whose JSON does not parse, or
// that calls a tool the role is not offered, reaches flow from a real
// Ollama as an empty reply with no tool calls. The planner asks once more
// (exactly two model calls, the first noted as an empty reply), then ends
// the run in error naming the empty reply; no empty plan reaches the coder.
func TestLiveEmptyReply(t *testing.T) {
	srv := live.Start(t)
	for _, mdl := range []live.Model{live.ModelMalformed, live.ModelUnoffered} {
		for _, api := range liveAPIs {
			t.Run(mdl.Name+"/"+api, func(t *testing.T) {
				m := livePlannerRun(t, srv, api, mdl.Name, map[string]string{"calc.go": liveCalcGo}, "", "max_iterations = 5")
				calls, tools := liveEvents(m, "planner")
				if len(calls) != 2 || len(tools) != 0 {
					t.Fatalf("planner: %d model calls and %d tool events, want 2 and none", len(calls), len(tools))
				}
				for i, c := range calls {
					if c["bytes"] != 0.0 || c["native_tool_calls"] != 0.0 || c["text_tool_calls"] != 0.0 || c["note"] != "empty reply" {
						t.Errorf("model call %d = %v, want an empty reply with no tool calls", i+1, c)
					}
				}
				p := liveRole(m, "planner")
				perr, _ := p["error"].(string)
				if p["status"] != "error" || !strings.HasPrefix(perr, agent.MsgEmptyReply+": it was told once and replied empty again") || p["turns"] != 2.0 {
					t.Errorf("planner = %v, want error after two turns naming the empty reply", p)
				}
				if m["status"] != "error" || !namesRoleError(m, perr) {
					t.Errorf("run = %v %q, want an error naming the planner's %q", m["status"], m["error"], perr)
				}
				if liveRole(m, "coder") != nil {
					t.Errorf("the coder ran after an empty plan: %v", m["roles"])
				}
			})
		}
	}
}

// TestLiveRepeatedRead: the one-call model makes the same file_read on
// every turn. flow runs it once; the identical call of each later turn is
// answered with that result (repeated in the event), so the file is never
// read a second time, and the planner, told after its first turn of
// repeats that the next one ends it, stops at that one (turn 3 of 4).
func TestLiveRepeatedRead(t *testing.T) {
	// On the OpenAI API the server's window is the run's (read before the
	// first call): three turns of prompts need more than its default.
	srv := live.Start(t, live.WithEnv("OLLAMA_CONTEXT_LENGTH", "16384"))
	for _, api := range liveAPIs {
		t.Run(api, func(t *testing.T) {
			const budget, turns = 4, 3
			m := livePlannerRun(t, srv, api, live.ModelCall.Name, map[string]string{"calc.go": liveCalcGo}, "", fmt.Sprintf("max_iterations = %d", budget))
			calls, tools := liveEvents(m, "planner")
			if len(calls) != turns || len(tools) != turns {
				t.Fatalf("planner: %d model calls and %d tool events, want %d of each", len(calls), len(tools), turns)
			}
			run := 0
			for i, e := range tools {
				if e["tool"] != "file_read" || e["status"] != "ok" {
					t.Errorf("tool event %d = %v, want file_read ok", i+1, e)
				}
				if e["repeated"] != true {
					run++
					if i != 0 {
						t.Errorf("tool event %d ran the read again: %v", i+1, e)
					}
				}
			}
			if run != 1 {
				t.Errorf("file_read ran %d times, want once and %d repeats", run, turns-1)
			}
			if m["tool_calls"] != float64(turns) {
				t.Errorf("tool_calls = %v, want %d (a repeat still counts)", m["tool_calls"], turns)
			}
			if p := liveRole(m, "planner"); p["error"] != agent.MsgRepeating || p["turns"] != float64(turns) {
				t.Errorf("planner = %v, want stopped on its repeats after %d turns", p, turns)
			}
		})
	}
}

// liveBigCalcGo is a calc.go of about 12,000 characters, some 3,500
// tokens: small enough for the planner to read in full, large enough that
// the prompt after reading it does not fit a window of 2048 or 6144 (the
// shared start of every prompt — system prompt, tools and brief — is
// itself some 3,500 tokens of the test models' tokenizer).
func liveBigCalcGo() string {
	var b strings.Builder
	b.WriteString(liveCalcGo)
	for i := 0; b.Len() < 12000; i++ {
		fmt.Fprintf(&b, "\n// Add%d returns the sum of a, b and %d, for the table of offsets.\nfunc Add%d(a, b int) int { return a + b + %d }\n", i, i, i, i)
	}
	return b.String()
}

// The server's log lines when it cuts a prompt to fit the window: the
// whole-message truncation of the chat endpoint (logged at debug level)
// and the runner's token truncation.
var liveTruncationLines = []string{"truncating input messages which exceed context length", "truncating input prompt"}

// TestLiveContextOverflowNative: with api = "native" flow sends
// context_length as the window and keeps its prompts inside it. The
// one-call model reads a large calc.go on its first turn, within a
// context_length of 6144; the prompt of the second turn would not fit, so
// flow stops before sending it, with a context_overflow error, and the
// server (logging at debug level) never truncated anything. The same
// server does log a truncation when a prompt that does not fit is sent to
// it, which is what the test would see had flow sent that turn.
func TestLiveContextOverflowNative(t *testing.T) {
	srv := live.Start(t, live.WithEnv("OLLAMA_DEBUG", "1"))
	m := livePlannerRun(t, srv, "native", live.ModelCall.Name, map[string]string{"calc.go": liveBigCalcGo()}, "context_length = 6144", "max_iterations = 5")
	calls, tools := liveEvents(m, "planner")
	if len(calls) != 1 || len(tools) != 1 || tools[0]["status"] != "ok" {
		t.Fatalf("planner: model calls %v, tool events %v; want one call that read calc.go, then a stop", calls, tools)
	}
	p := liveRole(m, "planner")
	perr, _ := p["error"].(string)
	t.Logf("planner error: %s", perr)
	if p["status"] != "error" || !strings.HasPrefix(perr, agent.MsgContextOverflow) ||
		!strings.Contains(perr, "context_length of 6144") || !strings.Contains(perr, "flow stopped before the server would truncate it") {
		t.Errorf("planner = %v, want a context_overflow error naming the window and the stop", p)
	}
	if m["status"] != "error" || !namesRoleError(m, perr) {
		t.Errorf("run = %v %q, want an error naming the planner's %q", m["status"], m["error"], perr)
	}
	log := srv.Log()
	for _, line := range liveTruncationLines {
		if strings.Contains(log, line) {
			t.Errorf("the server truncated a prompt of flow's (%q in its log)", line)
		}
	}

	// The control: the server does say so when it truncates.
	body := fmt.Sprintf(`{"model": %q, "stream": false, "options": {"num_ctx": 3072}, "messages": [{"role": "user", "content": %q}, {"role": "assistant", "content": "Noted."}, {"role": "user", "content": "What does calc.go do?"}]}`,
		live.ModelText.Name, liveBigCalcGo())
	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("control chat: %s", resp.Status)
	}
	if log := srv.Log(); !strings.Contains(log, liveTruncationLines[0]) {
		t.Errorf("a prompt over num_ctx left no %q in the server log; the check above cannot see a truncation", liveTruncationLines[0])
	}
}

// TestLiveContextOverflowOpenAI: with api = "openai" Ollama ignores
// context_length and runs the model with its own window, here
// OLLAMA_CONTEXT_LENGTH=2048 on the server, cutting the prompt to fit.
// flow reads that window before the first call (GET /api/ps after loading
// the model with the server's defaults), so the planner's first prompt,
// whose brief holds a large calc.go, is checked against 2048 tokens, not
// context_length's 16384: the role ends with a context_overflow error that
// names the server's window, where it was read and the server setting to
// change — before the call when flow's estimate sees it, or at the first
// call when the server's count fills the window (the test models'
// byte-level tokenizer makes more tokens than flow estimates). It used to
// be noticed only at the second call.
func TestLiveContextOverflowOpenAI(t *testing.T) {
	srv := live.Start(t, live.WithEnv("OLLAMA_CONTEXT_LENGTH", "2048"))
	m := livePlannerRun(t, srv, "openai", live.ModelCall.Name, map[string]string{"calc.go": liveBigCalcGo()}, "context_length = 16384", "max_iterations = 5")
	calls, tools := liveEvents(m, "planner")
	if len(calls) > 1 || len(tools) != 0 {
		t.Fatalf("planner: model calls %v, tool events %v; want the overflow seen before or at the first call", calls, tools)
	}
	p := liveRole(m, "planner")
	perr, _ := p["error"].(string)
	t.Logf("planner error: %s", perr)
	if p["status"] != "error" || !strings.HasPrefix(perr, agent.MsgContextOverflow) || !strings.Contains(perr, "OLLAMA_CONTEXT_LENGTH") ||
		!strings.Contains(perr, "the window of 2048 tokens the server runs the model with (GET /api/ps)") {
		t.Errorf("planner = %v, want a context_overflow error naming the server's window of 2048 and OLLAMA_CONTEXT_LENGTH", p)
	}
	if len(calls) == 1 {
		if tok, _ := calls[0]["prompt_tokens"].(float64); tok <= 0 || tok > 2048 || !strings.Contains(perr, fmt.Sprintf("counted %d prompt tokens", int(tok))) {
			t.Errorf("first call = %v, error %q: want the server's count, at most its window of 2048, in the error", calls[0], perr)
		}
		if calls[0]["error"] != perr {
			t.Errorf("the model call's event = %v, want the error %q", calls[0], perr)
		}
	}
	if m["status"] != "error" || !namesRoleError(m, perr) {
		t.Errorf("run = %v %q, want an error naming the planner's %q", m["status"], m["error"], perr)
	}
	// Made without flow's check, the same first prompt is cut by the
	// server: the check above stopped a real truncation.
	if len(calls) == 0 {
		liveTruncatedWithoutFlow(t, srv)
	} else if log := srv.Log(); !strings.Contains(log, "truncating input prompt") {
		t.Errorf("the server log has no truncation: the prompt was not over its window, so the test shows nothing")
	}
}

// liveTruncatedWithoutFlow sends a prompt holding calc.go to the OpenAI
// endpoint and checks that the server truncates it.
func liveTruncatedWithoutFlow(t *testing.T, srv *live.Server) {
	t.Helper()
	body := fmt.Sprintf(`{"model": %q, "messages": [{"role": "user", "content": %q}]}`, live.ModelText.Name, liveBigCalcGo())
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if log := srv.Log(); resp.StatusCode != http.StatusOK || !strings.Contains(log, "truncating input prompt") {
		t.Errorf("control: %s, and the server log has no truncation: the prompt was not over its window, so the test shows nothing", resp.Status)
	}
}

// namesRoleError reports whether the run's error (the one sentence a person
// reads) carries the role's error, less its machine-readable prefix.
func namesRoleError(m map[string]any, roleErr string) bool {
	runErr, _ := m["error"].(string)
	detail := strings.TrimPrefix(roleErr, agent.MsgContextOverflow)
	return runErr != "" && strings.Contains(runErr, detail)
}
