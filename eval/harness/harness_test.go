package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
)

// The self-test runs the real harness, the real flow binary and the tasks'
// real checks and acceptance tests; only the model is scripted (the fake
// Ollama server replays each task's scripted/*.json).

var flowBin string

func TestMain(m *testing.M) {
	if role := os.Getenv(standInRole); role != "" {
		os.Exit(standIn(role, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "flow-eval-test-")
	if err != nil {
		panic(err)
	}
	flowBin = filepath.Join(dir, "flow")
	build := exec.Command("go", "build", "-o", flowBin, "flow/cmd/flow")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("build flow: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	tasksDir = "../tasks"
	toolsDir = "../tools"
)

// needTools skips (fails when FLOW_TEST_EVAL=required, as in CI) when the
// checks of language cannot run here.
func needTools(t *testing.T, language string) {
	t.Helper()
	abs, _ := filepath.Abs(toolsDir)
	if miss := MissingTools(language, toolPath(abs)); len(miss) > 0 {
		msg := "the evaluation's " + language + " tools are missing (" + strings.Join(miss, ", ") + "): make eval-tools"
		if os.Getenv("FLOW_TEST_EVAL") == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestTasksAreWellFormed loads the whole suite: at least 12 tasks, three
// per language, every kind present.
func TestTasksAreWellFormed(t *testing.T) {
	tasks, err := LoadTasks(tasksDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 12 {
		t.Errorf("%d tasks, want at least 12", len(tasks))
	}
	langs, kinds := map[string]int{}, map[string]int{}
	for _, tk := range tasks {
		langs[tk.Language]++
		kinds[tk.Kind]++
		if _, err := os.Stat(filepath.Join(tk.Dir, "project", "flow.toml")); err == nil {
			t.Errorf("%s: the operator configuration must not be inside the project", tk.Name)
		}
	}
	for _, l := range []string{"go", "python", "javascript"} {
		if langs[l] < 3 {
			t.Errorf("%d %s tasks, want at least 3", langs[l], l)
		}
	}
	for k := range taskKinds {
		if kinds[k] == 0 {
			t.Errorf("no task of kind %s", k)
		}
	}
}

func TestLoadTasksSelects(t *testing.T) {
	tasks, err := LoadTasks(tasksDir, []string{"py-slugify", "go-*"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range tasks {
		names = append(names, tk.Name)
	}
	want := "py-slugify go-inventory-remove go-server-host go-stats-median go-textutil-reverse"
	if strings.Join(names, " ") != want {
		t.Errorf("tasks %v, want %s", names, want)
	}
	if _, err := LoadTasks(tasksDir, []string{"no-such-task"}); err == nil || !strings.Contains(err.Error(), "no-such-task") {
		t.Errorf("an unknown task gave %v", err)
	}
}

func TestLoadTaskRejectsBadTasks(t *testing.T) {
	cases := map[string]struct {
		taskJSON, flowTOML, want string
	}{
		"unknown field":   {`{"language":"go","kind":"feature","task":"x","acceptance":{"cmd":["true"]},"extra":1}`, "", "unknown field"},
		"bad kind":        {`{"language":"go","kind":"chore","task":"x","acceptance":{"cmd":["true"]}}`, "", "kind"},
		"no acceptance":   {`{"language":"go","kind":"feature","task":"x"}`, "", "acceptance.cmd"},
		"impossible flag": {`{"language":"go","kind":"impossible","task":"x","acceptance":{"cmd":["true"]}}`, "", "possible"},
		"sets ollama":     {`{"language":"go","kind":"feature","task":"x","acceptance":{"cmd":["true"]}}`, "[ollama]\nmodel = \"x\"\n", "must not set"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "task")
			for _, d := range []string{"project", "acceptance"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(dir, "task.json"), []byte(c.taskJSON), 0o644)
			os.WriteFile(filepath.Join(dir, "flow.toml"), []byte(c.flowTOML), 0o644)
			_, err := LoadTask(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadTask = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestAcceptanceRejectsTheUntouchedProject: every acceptance test fails on
// the project as shipped, so "acceptance passed" always means the model did
// something.
func TestAcceptanceRejectsTheUntouchedProject(t *testing.T) {
	tasks, err := LoadTasks(tasksDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := filepath.Abs(toolsDir)
	for _, tk := range tasks {
		t.Run(tk.Name, func(t *testing.T) {
			t.Parallel()
			needTools(t, tk.Language)
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := prepareWorkspace(tk, ws, tools); err != nil {
				t.Fatal(err)
			}
			env := runEnv(toolPath(tools), dir)
			passed, out, err := runAcceptance(context.Background(), tk, ws, filepath.Join(dir, "accept"), env)
			if err != nil {
				t.Fatalf("acceptance could not run: %v\n%s", err, out)
			}
			if passed {
				t.Fatalf("the acceptance test passes on the untouched project:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(ws, "acceptance_test.go")); err == nil {
				t.Error("the acceptance files leaked into the workspace")
			}
		})
	}
}

// TestScriptedRuns runs the harness's command line on scripted solutions
// and checks the outcomes it records.
func TestScriptedRuns(t *testing.T) {
	cases := []struct {
		task, script, language string
		api                    string
		verified, acceptance   bool
		changed                []string
	}{
		{"go-stats-median", "correct", "go", "native", true, true, []string{"stats.go"}},
		{"go-stats-median", "correct", "go", "openai", true, true, []string{"stats.go"}},
		// flow refuses to verify a weakened test (the hidden acceptance test
		// fails too), so it is no false verified; a hard-coded answer that
		// flow cannot tell from a fix is, and the harness must say so.
		{"go-stats-median", "weaken-test", "go", "native", false, false, []string{"stats_test.go"}},
		{"py-slugify", "correct", "python", "native", true, true, []string{"slug.py"}},
		{"py-slugify", "wrong", "python", "native", true, false, []string{"slug.py"}},
		{"py-pricing-impossible", "weaken-test", "python", "native", false, false, []string{"test_pricing.py"}},
		{"js-camel-case", "correct", "javascript", "native", true, true, []string{"strings.js"}},
		// The coder answers with both changed files in code blocks, as the
		// 1.5B model does, and calls no tool: flow applies the code
		// (agent.answer_code), counted as tool calls from text. No check
		// shows the change (they all passed before), so the coder is asked
		// for a test, writes one that fails on the old code, and only then
		// is the reviewer asked.
		{"go-server-host", "code-answer", "go", "native", true, true, []string{"config.go", "host_test.go", "server.go"}},
		{"go-server-host", "code-answer", "go", "openai", true, true, []string{"config.go", "host_test.go", "server.go"}},
		// With agent.edit_format = "whole" (the harness's -agent) the
		// coder's answer holds stats.go whole, the host writes it, the
		// failing test now passes, and the one reviewer call approves.
		{"go-stats-median", "whole", "go", "native", true, true, []string{"stats.go"}},
		{"go-stats-median", "whole", "go", "openai", true, true, []string{"stats.go"}},
	}
	for _, c := range cases {
		t.Run(c.task+"/"+c.script+"/"+c.api, func(t *testing.T) {
			t.Parallel()
			needTools(t, c.language)
			script, err := os.ReadFile(filepath.Join(tasksDir, c.task, "scripted", c.script+".json"))
			if err != nil {
				t.Fatal(err)
			}
			srv := ollamatest.NewServer()
			if err := srv.LoadScript(script); err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })

			dir := t.TempDir()
			out := filepath.Join(dir, "run.json")
			var stdout, stderr bytes.Buffer
			args := []string{
				"-flow", flowBin, "-tasks-dir", tasksDir, "-tools-dir", toolsDir,
				"-tasks", c.task, "-base-url", srv.URL, "-model", "flow-eval-scripted", "-api", c.api,
				"-context-length", "16384", "-call-timeout", "60", "-doctor=false",
				"-work-dir", filepath.Join(dir, "work"), "-out", out,
			}
			if c.script == "whole" {
				args = append(args, "-agent", `edit_format = "whole"`)
			}
			code := run(context.Background(), args, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("harness exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			var f File
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			if len(f.Results) != 1 || !f.Finished {
				t.Fatalf("results %d, finished %t; want 1, true", len(f.Results), f.Finished)
			}
			r := f.Results[0]
			report, _ := os.ReadFile(filepath.Join(dir, "work", c.task+"-1", "report.json"))
			if r.Verified != c.verified || r.AcceptancePassed != c.acceptance {
				t.Fatalf("verified %t, acceptance %t; want %t, %t\nresult: %+v\nreport: %s", r.Verified, r.AcceptancePassed, c.verified, c.acceptance, r, report)
			}
			wantFalse := c.verified && !c.acceptance
			if r.FalseVerified != wantFalse {
				t.Errorf("false verified %t, want %t", r.FalseVerified, wantFalse)
			}
			possible := c.task != "py-pricing-impossible"
			wantPass := c.acceptance
			if !possible {
				wantPass = !c.verified
			}
			if r.Pass != wantPass {
				t.Errorf("pass %t, want %t", r.Pass, wantPass)
			}
			if strings.Join(r.ChangedFiles, ",") != strings.Join(c.changed, ",") {
				t.Errorf("changed files %v, want %v", r.ChangedFiles, c.changed)
			}
			// The tasks' workspaces fit in the brief: agent.planner =
			// "auto" skips the planner, and the scripts have no planner turn.
			if len(r.Roles) == 0 || !strings.HasPrefix(r.Roles[0], "planner:skipped") {
				t.Errorf("roles %v, want the planner skipped first", r.Roles)
			}
			if c.script == "whole" && (r.EditFormat != "whole" || r.ModelCalls != 2 || r.ToolCallsText == nil || *r.ToolCallsText != 1 || r.Evidence != "fixed") {
				t.Errorf("whole: edit format %q, %d model calls, %v tool calls from text, evidence %q; want whole, 2 (coder, reviewer), 1, fixed", r.EditFormat, r.ModelCalls, r.ToolCallsText, r.Evidence)
			}
			if c.script == "code-answer" && (r.ToolCallsText == nil || *r.ToolCallsText != 2 || r.ModelCalls != 4) {
				t.Errorf("code answer: %v tool calls from text in %d model calls, want 2 in 4 (coder; repair coder ×2; reviewer)", r.ToolCallsText, r.ModelCalls)
			}
			if r.ModelCalls < 2 || r.ToolCalls < 1 || r.PromptTokens == 0 || r.CompletionTokens == 0 || r.WallMS <= 0 {
				t.Errorf("figures not taken from the report: %+v", r)
			}
			// The distinct prompt tokens come from the report's model_call
			// events (prompt_chars, new_prompt_chars): a report that drops
			// them leaves the cache-reuse goal unmeasurable.
			if r.Prompt == nil || r.Prompt.Sent == 0 || r.Prompt.Distinct <= 0 || r.Prompt.Distinct > r.Prompt.Sent {
				t.Errorf("prompt figures %+v, want distinct tokens between 1 and those sent", r.Prompt)
			}
			if wantStatus := map[bool]string{true: "ok", false: "unverified"}[c.verified]; r.Status != wantStatus {
				t.Errorf("status %q, want %s\nreport: %s", r.Status, wantStatus, report)
			}
			if f.Summary.Runs != 1 || f.Summary.FalseVerified != btoi(wantFalse) || f.Summary.Passed != btoi(wantPass) {
				t.Errorf("summary %+v", f.Summary)
			}
			if !strings.Contains(stderr.String(), "[1/1] "+c.task) {
				t.Errorf("no progress line on stderr:\n%s", stderr.String())
			}
			for _, want := range []string{"pass rate", "false verified " + itoa(btoi(wantFalse)), c.task} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, stdout.String())
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestSummarize(t *testing.T) {
	rs := []Result{
		{Task: "a", Pass: true, Verified: true, AcceptancePassed: true, WallMS: 1000, ModelCalls: 4},
		{Task: "a", Verified: true, FalseVerified: true, WallMS: 3000, ModelCalls: 6},
		{Task: "b", Status: "harness_error", WallMS: 2000},
	}
	s := Summarize(rs)
	if s.Runs != 3 || s.Passed != 1 || s.Verified != 2 || s.FalseVerified != 1 || s.HarnessErrors != 1 {
		t.Errorf("counts %+v", s)
	}
	if s.MedianWallMS != 2000 || s.MedianMSPerCall != 375 || s.MedianModelCalls != 4 {
		t.Errorf("medians %+v", s)
	}
	var buf bytes.Buffer
	WriteTable(&buf, rs)
	if !strings.Contains(buf.String(), "false verified 1") || !strings.Contains(buf.String(), "pass rate 33%") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestToolCallSources(t *testing.T) {
	n, tx, rf := toolCallSources([]map[string]any{{"tool": "file_read", "status": "ok"}})
	if n != nil || tx != nil || rf != nil {
		t.Errorf("a report without sources gave counts %v %v %v; want unknown", n, tx, rf)
	}
	n, tx, rf = toolCallSources([]map[string]any{
		{"source": "native"}, {"source": "text"}, {"source": "text", "status": "refused"}, {"from_text": false},
	})
	if n == nil || tx == nil || rf == nil || *n != 2 || *tx != 2 || *rf != 1 {
		t.Errorf("counts %v %v %v; want 2 native, 2 from text, 1 refused", n, tx, rf)
	}
}

func TestRepeatTurns(t *testing.T) {
	call := map[string]any{"kind": "model_call"}
	read := map[string]any{"tool": "file_read", "status": "ok"}
	again := map[string]any{"tool": "file_read", "status": "ok", "repeated": true}
	events := []map[string]any{
		call, read, // a new call
		call, again, // a turn of repeats
		call, again, read, // a repeat and a new call
		call,               // an answer without calls
		call, again, again, // a turn of repeats, at the end
	}
	if got := repeatTurns(events); got != 2 {
		t.Errorf("repeatTurns = %d, want 2", got)
	}
	if got := repeatTurns(nil); got != 0 {
		t.Errorf("repeatTurns(nil) = %d, want 0", got)
	}
}

func TestFillFromReportSumsPromptEval(t *testing.T) {
	var res Result
	fillFromReport(&res, &flowReport{Events: []map[string]any{
		{"kind": "model_call", "prompt_eval_ms": 1200.0},
		{"tool": "file_read", "status": "ok", "prompt_eval_ms": 99.0}, // not a model call
		{"kind": "model_call"},
		{"kind": "model_call", "prompt_eval_ms": 300.0},
	}})
	if res.PromptEvalMS != 1500 {
		t.Errorf("PromptEvalMS = %d, want 1500", res.PromptEvalMS)
	}
}

// TestFillFromReportHostEdits: the changes flow made itself (mended
// imports) are read from the report, a failed write marked.
func TestFillFromReportHostEdits(t *testing.T) {
	var rep flowReport
	if err := json.Unmarshal([]byte(`{"edit_format":{"format":"tools","why":"auto","tools":"text"},"host_edits":[
		{"cycle":1,"path":"inventory.go","what":"imports: adds `+"`fmt`"+`","status":"ok"},
		{"cycle":2,"path":"stats.go","what":"imports: removes the unused `+"`sort`"+`","status":"error","error":"unsaved"}]}`), &rep); err != nil {
		t.Fatal(err)
	}
	var res Result
	fillFromReport(&res, &rep)
	want := []string{"inventory.go: imports: adds `fmt`", "stats.go: imports: removes the unused `sort` (error)"}
	if strings.Join(res.HostEdits, "|") != strings.Join(want, "|") {
		t.Errorf("HostEdits = %q, want %q", res.HostEdits, want)
	}
	if res.EditFormat != "tools" || res.ToolDeclarations != "text" {
		t.Errorf("edit format %q, tools declared %q; want tools, text", res.EditFormat, res.ToolDeclarations)
	}
}

// TestInterruptedRunIsNotAResult: a run cut short by the harness's own
// interruption measured nothing; it stays pending instead of counting as a
// failure.
func TestInterruptedRunIsNotAResult(t *testing.T) {
	needTools(t, "go")
	srv := ollamatest.NewServer()
	srv.SetModels("flow-eval-scripted")
	srv.SetCapabilities("flow-eval-scripted", "completion", "tools")
	srv.Enqueue(ollamatest.Turn{Content: "never sent", Delay: 10 * time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.OnRequest = func(r ollamatest.Recorded) {
		if r.Path == "/api/chat" {
			cancel()
		}
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{
		"-flow", flowBin, "-tasks-dir", tasksDir, "-tools-dir", toolsDir, "-tasks", "go-stats-median",
		"-base-url", srv.URL, "-model", "flow-eval-scripted", "-doctor=false", "-work-dir", filepath.Join(dir, "work"), "-out", out,
	}, &stdout, &stderr)
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s", code, stderr.String())
	}
	var f File
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 0 || f.Finished || len(f.Pending) != 1 || f.Pending[0].Task != "go-stats-median" {
		t.Errorf("results %d, finished %t, pending %v; want none, false, the task", len(f.Results), f.Finished, f.Pending)
	}
}

// TestReviewerServerReachesTheConfig: -reviewer-url sends the reviewer,
// and only the reviewer, to a server of its own, and flow accepts it.
func TestReviewerServerReachesTheConfig(t *testing.T) {
	ws := t.TempDir()
	o := &Options{BaseURL: "http://127.0.0.1:1", Model: "m", API: "native", ContextLength: 4096, CallTimeout: 5,
		ReviewerURL: "http://127.0.0.1:2", ReviewerModel: "small"}
	text := operatorConfig(o, &Task{Checks: "[agent]\nmax_cycles = 3\n\n[checks.unit]\ncmd = [\"true\"]\n"}, ws)
	file := filepath.Join(t.TempDir(), "flow.toml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{ConfigFile: file, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("flow rejects the harness's config: %v\n%s", err, text)
	}
	name, srv, _ := cfg.ServerFor(config.RoleReviewer)
	coder, _, _ := cfg.ServerFor(config.RoleCoder)
	if name != "reviewer" || srv.BaseURL != "http://127.0.0.1:2" || cfg.ModelFor(config.RoleReviewer) != "small" ||
		coder != config.DefaultServer || cfg.ModelFor(config.RoleCoder) != "m" || cfg.Agent.MaxCycles != 3 {
		t.Errorf("reviewer on %s %s %s, coder on %s %s\n%s", name, srv.BaseURL, cfg.ModelFor(config.RoleReviewer), coder, cfg.ModelFor(config.RoleCoder), text)
	}
}

// TestAgentSettingsReachTheConfig: -agent lines land in the run's
// [agent] table, and flow accepts the result.
func TestAgentSettingsReachTheConfig(t *testing.T) {
	ws := t.TempDir()
	o := &Options{BaseURL: "http://127.0.0.1:1", Model: "m", API: "native", ContextLength: 4096, CallTimeout: 5,
		Agent: "brief_chars = 0; max_iterations = 9"}
	for _, checks := range []string{
		"[checks.unit]\ncmd = [\"true\"]\n",
		"[agent]\nmax_cycles = 3\n\n[checks.unit]\ncmd = [\"true\"]\n", // the task's own [agent]
	} {
		text := operatorConfig(o, &Task{Checks: checks}, ws)
		file := filepath.Join(t.TempDir(), "flow.toml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(config.LoadOptions{ConfigFile: file, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatalf("flow rejects the harness's config: %v\n%s", err, text)
		}
		if cfg.Agent.BriefChars != 0 || cfg.Agent.MaxIterations != 9 || len(cfg.Checks) != 1 {
			t.Errorf("agent = %+v, checks %d; want brief_chars 0, max_iterations 9 and the task's check\n%s", cfg.Agent, len(cfg.Checks), text)
		}
	}
}
