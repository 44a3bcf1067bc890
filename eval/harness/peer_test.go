package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flow/runtime/config"
)

func TestParseRunners(t *testing.T) {
	cases := []struct {
		flow, peer string
		want       string // label:type=path, space-separated
		err        string
	}{
		{"bin/flow", "", "flow:flow=bin/flow", ""},
		{"before=/tmp/flow-old,after=bin/flow", "", "before:flow=/tmp/flow-old after:flow=bin/flow", ""},
		{" before = /a , after=/b ", "aider", "before:flow=/a after:flow=/b aider:aider=/venv/aider", ""},
		{"", "aider", "aider:aider=/venv/aider", ""},
		{`tools=bin/flow@edit_format = "tools",whole=bin/flow@edit_format = "whole"; answer_code = false`, "",
			`tools:flow=bin/flow[edit_format = "tools"] whole:flow=bin/flow[edit_format = "whole"; answer_code = false]`, ""},
		{"/a,/b", "", "", "each needs a label"},
		{"x=/a,x=/b", "", "", "given twice"},
		{"aider=/a", "aider", "", "the peer's"},
		{"Before=/a", "", "", "must match"},
		{"before=", "", "", "no path"},
		{"bin/flow", "claude", "", "-peer must be aider"},
		{"", "", "", "nothing to run"},
	}
	for _, c := range cases {
		got, err := ParseRunners(c.flow, c.peer, "/venv/aider")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRunners(%q, %q) = %v, %v; want an error containing %q", c.flow, c.peer, got, err, c.err)
			}
			continue
		}
		var parts []string
		for _, r := range got {
			p := r.Label + ":" + r.Type + "=" + r.Path
			if r.Agent != "" {
				p += "[" + r.Agent + "]"
			}
			parts = append(parts, p)
		}
		if err != nil || strings.Join(parts, " ") != c.want {
			t.Errorf("ParseRunners(%q, %q) = %v, %v; want %s", c.flow, c.peer, parts, err, c.want)
		}
	}
}

// TestAiderArgs: the command line and the model files of one aider run.
func TestAiderArgs(t *testing.T) {
	dir := t.TempDir()
	o := &Options{Model: "flow-qwen2.5-coder:1.5b", BaseURL: "http://127.0.0.1:11434", ContextLength: 12288, CallTimeout: 600}
	args := aiderArgs(o, dir, "go vet ./... && go test ./...", "Fix Median.", []string{"stats.go", "stats_test.go"})
	flag := func(name string) (string, bool) {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			return "", false
		}
		return args[i+1], true
	}
	for name, want := range map[string]string{
		"--model":               "ollama_chat/flow-qwen2.5-coder:1.5b",
		"--timeout":             "600",
		"--test-cmd":            "go vet ./... && go test ./...",
		"--llm-history-file":    filepath.Join(dir, aiderLLMHistory),
		"--analytics-log":       filepath.Join(dir, aiderAnalyticsLog),
		"--model-settings-file": filepath.Join(dir, aiderSettingsFile),
		"--model-metadata-file": filepath.Join(dir, aiderMetadataFile),
		"--chat-history-file":   filepath.Join(dir, aiderChatHistory),
	} {
		if got, ok := flag(name); !ok || got != want {
			t.Errorf("%s %q, want %q\n%q", name, got, want, args)
		}
	}
	for _, f := range []string{"--no-git", "--no-auto-commits", "--yes-always", "--no-stream", "--no-pretty",
		"--no-check-update", "--analytics-disable", "--no-show-release-notes", "--auto-test", "--message=Fix Median."} {
		if !slices.Contains(args, f) {
			t.Errorf("no %s in %q", f, args)
		}
	}
	if got := args[len(args)-2:]; got[0] != "stats.go" || got[1] != "stats_test.go" {
		t.Errorf("the files %q are not the last arguments", got)
	}
	if a := aiderArgs(o, dir, "", "x", nil); slices.Contains(a, "--auto-test") || slices.Contains(a, "--test-cmd") {
		t.Errorf("without checks, args %q still give a test command", a)
	}

	if err := aiderModelFiles(o, dir); err != nil {
		t.Fatal(err)
	}
	var settings []struct {
		Name        string         `json:"name"`
		ExtraParams map[string]int `json:"extra_params"`
	}
	var meta map[string]map[string]any
	readJSON(t, filepath.Join(dir, aiderSettingsFile), &settings)
	readJSON(t, filepath.Join(dir, aiderMetadataFile), &meta)
	if len(settings) != 1 || settings[0].Name != "ollama_chat/flow-qwen2.5-coder:1.5b" || settings[0].ExtraParams["num_ctx"] != 12288 {
		t.Errorf("model settings %+v, want num_ctx 12288 for ollama_chat/flow-qwen2.5-coder:1.5b", settings)
	}
	if m := meta["ollama_chat/flow-qwen2.5-coder:1.5b"]; m == nil || m["max_input_tokens"] != 12288.0 || m["input_cost_per_token"] != 0.0 {
		t.Errorf("model metadata %v", meta)
	}

	env := aiderEnv([]string{"PATH=/bin", "HOME=/root", "AIDER_MODEL=gpt-4o", "OLLAMA_API_BASE=http://elsewhere", "KEEP=1"},
		o, dir, []string{"GOCACHE=/root/.cache/go-build"})
	for _, kv := range []string{"PATH=/bin", "KEEP=1", "HOME=" + filepath.Join(dir, "home"), "OLLAMA_API_BASE=http://127.0.0.1:11434",
		"LITELLM_LOCAL_MODEL_COST_MAP=True", "GOCACHE=/root/.cache/go-build"} {
		if !slices.Contains(env, kv) {
			t.Errorf("aider's environment lacks %s: %q", kv, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "AIDER_") || kv == "HOME=/root" || kv == "OLLAMA_API_BASE=http://elsewhere" {
			t.Errorf("aider's environment keeps %s", kv)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}

// TestTestCommand: the checks, joined for aider's --test-cmd, run the same
// argv through a shell.
func TestTestCommand(t *testing.T) {
	checks := []config.Check{
		{Name: "gofmt", Cmd: []string{"sh", "-c", `out=$(printf 'a b'); if [ -n "$out" ]; then echo "it's $out"; fi`}},
		{Name: "echo", Cmd: []string{"printf", "%s|", "two words", "", "semi;colon"}},
	}
	cmd := testCommand(checks)
	want := `sh -c 'out=$(printf '\''a b'\''); if [ -n "$out" ]; then echo "it'\''s $out"; fi' && printf '%s|' 'two words' '' 'semi;colon'`
	if cmd != want {
		t.Errorf("testCommand =\n%s\nwant\n%s", cmd, want)
	}
	out, err := exec.Command("/bin/sh", "-c", cmd).CombinedOutput()
	if err != nil || string(out) != "it's a b\ntwo words||semi;colon|" {
		t.Errorf("sh -c %s = %q, %v", cmd, out, err)
	}
}

// TestReadAiderFigures reads logs as aider 0.86.2 writes them (the event
// line is from a real run against the scripted server).
func TestReadAiderFigures(t *testing.T) {
	dir := t.TempDir()
	if f, err := readAiderFigures(dir); err != nil || f != (aiderFigures{}) {
		t.Errorf("no logs: %+v, %v; want zero figures", f, err)
	}
	hist := "TO LLM 2026-12-03T07:53:00\n-------\nSYSTEM Act as an expert software developer.\n-------\nUSER TO LLM 2026-12-03T07:53:00\n" +
		"LLM RESPONSE 2026-12-03T07:53:00\nASSISTANT Median must average the two middle values.\n" +
		"TO LLM 2026-12-03T07:54:10\n-------\nSYSTEM Act as an expert software developer.\nLLM RESPONSE 2026-12-03T07:54:30\n"
	send := `{"event": "message_send", "properties": {"main_model": "ollama_chat/flow-eval-scripted", "weak_model": "ollama_chat/flow-eval-scripted", "editor_model": "ollama_chat/flow-eval-scripted", "edit_format": "whole", "prompt_tokens": 600, "completion_tokens": 120, "total_tokens": 720, "cost": 0, "total_cost": 0.0}, "user_id": "bfefef75-f09a-47bf-8398-100fb7f26661", "time": 1796284324}`
	events := `{"event": "launched", "properties": {}, "user_id": "u", "time": 1}` + "\n" + send + "\n\n" +
		strings.Replace(strings.Replace(send, `"prompt_tokens": 600`, `"prompt_tokens": 800`, 1), `"completion_tokens": 120`, `"completion_tokens": 20`, 1) + "\n"
	os.WriteFile(filepath.Join(dir, aiderLLMHistory), []byte(hist), 0o644)
	os.WriteFile(filepath.Join(dir, aiderAnalyticsLog), []byte(events), 0o644)
	f, err := readAiderFigures(dir)
	if want := (aiderFigures{Calls: 2, PromptTokens: 1400, CompletionTokens: 140, EditFormat: "whole"}); err != nil || f != want {
		t.Errorf("readAiderFigures = %+v, %v; want %+v", f, err, want)
	}
	os.WriteFile(filepath.Join(dir, aiderAnalyticsLog), []byte(`{"event": "message_send", "properties": {}}`+"\n"), 0o644)
	if _, err := readAiderFigures(dir); err == nil || !strings.Contains(err.Error(), "without prompt_tokens") {
		t.Errorf("an event without tokens gave %v", err)
	}
	os.WriteFile(filepath.Join(dir, aiderAnalyticsLog), []byte("not json\n"), 0o644)
	if _, err := readAiderFigures(dir); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a broken log gave %v", err)
	}
}

func TestAiderVerified(t *testing.T) {
	ok := []CheckOutcome{{Name: "vet", Passed: true}, {Name: "test", Passed: true}}
	failing := []CheckOutcome{{Name: "vet", Passed: true}, {Name: "test", Passed: false}}
	cases := []struct {
		name    string
		exit    int
		changed []string
		checks  []CheckOutcome
		want    bool
	}{
		{"exit 0, a change, checks pass", 0, []string{"a.go"}, ok, true},
		{"a check fails", 0, []string{"a.go"}, failing, false},
		{"aider failed", 1, []string{"a.go"}, ok, false},
		{"killed", -1, []string{"a.go"}, ok, false},
		{"no change", 0, nil, ok, false},
		{"no checks ran", 0, []string{"a.go"}, nil, false},
	}
	for _, c := range cases {
		if got := aiderVerified(c.exit, c.changed, c.checks); got != c.want {
			t.Errorf("%s: aiderVerified = %t, want %t", c.name, got, c.want)
		}
	}
}

func TestChangedFiles(t *testing.T) {
	orig, ws := t.TempDir(), t.TempDir()
	write := func(dir, rel, s string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{orig, ws} {
		write(d, "same.go", "package a\n")
		write(d, "sub/same.py", "x = 1\n")
	}
	write(orig, "edited.go", "package a\n")
	write(ws, "edited.go", "package a // edited\n")
	write(orig, "removed.js", "1\n")
	write(ws, "sub/added.py", "y = 2\n")
	write(ws, ".aider.tags.cache.v4/cache.db", "aider's")
	write(ws, "__pycache__/same.cpython-311.pyc", "bytecode")
	write(ws, ".git/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink(orig, filepath.Join(ws, "node_modules")); err != nil {
		t.Fatal(err)
	}
	got, err := changedFiles(orig, ws)
	if want := "edited.go removed.js sub/added.py"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("changedFiles = %q, %v; want %s", got, err, want)
	}
	src, err := sourceFiles(ws, "python")
	if want := "sub/added.py sub/same.py"; err != nil || strings.Join(src, " ") != want {
		t.Errorf("sourceFiles = %q, %v; want %s", src, err, want)
	}
}

// TestPeerInterleaved runs two flow builds and the peer (all stand-ins) on
// two tasks twice, with a server log, and checks the order of the runs,
// each run's outcome by the rules (aider verified = exit 0, a change and
// every check passing; false verified = verified and acceptance failed),
// the figures attributed to each run, the JSON file and the tables.
func TestPeerInterleaved(t *testing.T) {
	needTools(t, "go")
	needTools(t, "python")
	dir := t.TempDir()
	tasksAbs, err := filepath.Abs(tasksDir)
	if err != nil {
		t.Fatal(err)
	}
	plan, serverLog := filepath.Join(dir, "plan.json"), filepath.Join(dir, "server.log")
	if err := os.WriteFile(serverLog, []byte(realSlotFirst+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flowBin, err := writeStandIn(dir, runnerFlow, plan, serverLog, tasksAbs)
	if err != nil {
		t.Fatal(err)
	}
	aiderBin, err := writeStandIn(dir, runnerAider, plan, serverLog, tasksAbs)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(tasksDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stats := read("go-stats-median/project/stats.go")
	goFixed := strings.Replace(stats, "\treturn s[len(s)/2]\n}", "\tif len(s)%2 == 0 {\n\t\treturn (s[len(s)/2-1] + s[len(s)/2]) / 2\n\t}\n\treturn s[len(s)/2]\n}", 1)
	slug := read("py-slugify/project/slug.py")
	pyFixed := strings.Replace(slug, "    text = re.sub(r\"[^a-z0-9 ]\", \"\", text)\n    return text.replace(\" \", \"-\")", "    return \"-\".join(re.findall(r\"[a-z0-9]+\", text))", 1)
	pyWrong := strings.Replace(slug, "text.replace(\" \", \"-\")", "text.replace(\" \", \"_\")", 1)
	if goFixed == stats || pyFixed == slug || pyWrong == slug {
		t.Fatal("the projects changed: the fixes no longer apply")
	}
	pyWeakened := "import unittest\n\nfrom slug import slugify\n\n\nclass SlugifyTest(unittest.TestCase):\n    def test_two_words(self):\n        self.assertEqual(slugify(\"Hello World\"), \"hello-world\")\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"

	type want struct {
		status                                  string
		verified, acceptance, falseVerified, ok bool   // ok: pass
		testCmdExit                             string // the stand-in aider's --test-cmd: "exit 0", "exit 1", or ""
	}
	type planned struct {
		step standInStep
		want want
	}
	const (
		goT = "go-stats-median"
		pyT = "py-slugify"
	)
	step := func(task string, rep int, runner string, s standInStep) standInStep {
		s.Task, s.Run = task, task+"-"+itoa(rep)+"-"+runner
		return s
	}
	runs := []planned{
		{step(goT, 1, "before", standInStep{Calls: 2, Prompt: []int{500, 600}, Server: [][3]int{{500, 0, 500}, {600, 480, 120}}}),
			want{"unverified", false, false, false, false, ""}},
		{step(goT, 1, "after", standInStep{Write: map[string]string{"stats.go": goFixed}, Verified: true, Calls: 3, Prompt: []int{500, 600, 700}, Server: [][3]int{{500, 0, 500}, {600, 480, 120}, {700, 600, 100}}}),
			want{"ok", true, true, false, true, ""}},
		{step(goT, 1, "aider", standInStep{Write: map[string]string{"stats.go": goFixed}, Calls: 1, Prompt: []int{900}, Server: [][3]int{{900, 0, 900}}}),
			want{"ok", true, true, false, true, "exit 0"}},
		{step(pyT, 1, "before", standInStep{Calls: 1, Prompt: []int{400}, Server: [][3]int{{400, 0, 400}}}),
			want{"unverified", false, false, false, false, ""}},
		{step(pyT, 1, "after", standInStep{Write: map[string]string{"slug.py": pyFixed}, Verified: true, Calls: 2, Prompt: []int{400, 450}, Server: [][3]int{{400, 0, 400}, {450, 400, 50}}}),
			want{"ok", true, true, false, true, ""}},
		// The weakened test passes the checks, so the harness counts it
		// verified; the acceptance test restores the tests: false verified.
		{step(pyT, 1, "aider", standInStep{Write: map[string]string{"test_slug.py": pyWeakened}, Calls: 1, Prompt: []int{700}, Server: [][3]int{{700, 0, 700}}}),
			want{"ok", true, false, true, false, "exit 0"}},
		{step(goT, 2, "before", standInStep{Calls: 1, Prompt: []int{500}, Server: [][3]int{{500, 0, 500}}}),
			want{"unverified", false, false, false, false, ""}},
		{step(goT, 2, "after", standInStep{Write: map[string]string{"stats.go": goFixed}, Verified: true, Calls: 3, Prompt: []int{500, 600, 700}, Server: [][3]int{{500, 0, 500}, {600, 480, 120}, {700, 600, 100}}}),
			want{"ok", true, true, false, true, ""}},
		// The right fix, but aider failed: not verified, though accepted.
		{step(goT, 2, "aider", standInStep{Write: map[string]string{"stats.go": goFixed}, Exit: 1, Calls: 2, Prompt: []int{900}, Server: [][3]int{{900, 0, 900}, {950, 900, 50}}}),
			want{"error", false, true, false, true, "exit 0"}},
		// A flow build that claims verified for no change: false verified.
		{step(pyT, 2, "before", standInStep{Verified: true, Calls: 1, Prompt: []int{400}, Server: [][3]int{{400, 0, 400}}}),
			want{"ok", true, false, true, false, ""}},
		{step(pyT, 2, "after", standInStep{Write: map[string]string{"slug.py": pyFixed}, Verified: true, Calls: 2, Prompt: []int{400, 450}, Server: [][3]int{{400, 0, 400}, {450, 400, 50}}}),
			want{"ok", true, true, false, true, ""}},
		// A wrong fix: the tests fail, so not verified.
		{step(pyT, 2, "aider", standInStep{Write: map[string]string{"slug.py": pyWrong}, Calls: 1, Prompt: []int{700}, Server: [][3]int{{700, 0, 700}}}),
			want{"unverified", false, false, false, false, "exit 1"}},
	}
	var steps []standInStep
	for _, r := range runs {
		steps = append(steps, r.step)
	}
	b, _ := json.Marshal(steps)
	if err := os.WriteFile(plan, b, 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "run.json")
	work := filepath.Join(dir, "work")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-flow", "before=" + flowBin + ",after=" + flowBin, "-peer", "aider", "-aider", aiderBin,
		"-tasks-dir", tasksDir, "-tools-dir", toolsDir, "-tasks", goT + "," + pyT, "-reps", "2",
		"-base-url", "http://127.0.0.1:1", "-model", "m", "-context-length", "8192", "-doctor=false",
		"-server-log", serverLog, "-work-dir", work, "-keep", "-out", out,
	}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("harness exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if left, _ := os.ReadFile(plan); string(left) != "[]" {
		t.Errorf("steps not run: %s", left)
	}
	var f File
	readJSON(t, out, &f)
	if !f.Finished || len(f.Results) != len(runs) || len(f.Pending) != 0 {
		t.Fatalf("finished %t, %d results, %d pending; want true, %d, 0\nstderr:\n%s", f.Finished, len(f.Results), len(f.Pending), len(runs), stderr.String())
	}
	for i, r := range f.Results {
		w, s := runs[i].want, runs[i].step
		name := r.Task + "-" + itoa(r.Rep) + "-" + r.Runner
		if name != s.Run {
			t.Errorf("run %d is %s, want %s: the runs are not interleaved task by task", i+1, name, s.Run)
			continue
		}
		if r.Status != w.status || r.Verified != w.verified || r.AcceptancePassed != w.acceptance || r.FalseVerified != w.falseVerified || r.Pass != w.ok {
			t.Errorf("%s: status %s, verified %t, acceptance %t, false verified %t, pass %t; want %s, %t, %t, %t, %t\n%+v",
				name, r.Status, r.Verified, r.AcceptancePassed, r.FalseVerified, r.Pass, w.status, w.verified, w.acceptance, w.falseVerified, w.ok, r)
		}
		if r.ModelCalls != s.Calls || r.PromptTokens != sum(s.Prompt) {
			t.Errorf("%s: %d calls, %d prompt tokens; want %d, %d", name, r.ModelCalls, r.PromptTokens, s.Calls, sum(s.Prompt))
		}
		var srv ServerFigures
		for _, q := range s.Server {
			srv.Add(ServerFigures{Requests: 1, PromptTokens: q[0], CachedTokens: q[1], EvaluatedTokens: q[2]})
		}
		if r.Server == nil || !sameFigures(*r.Server, srv) {
			t.Errorf("%s: server figures %+v (%s), want %+v", name, r.Server, r.ServerError, srv)
		}
		wantType := runnerFlow
		if r.Runner == "aider" {
			wantType = runnerAider
		}
		if r.RunnerType != wantType {
			t.Errorf("%s: runner type %q, want %q", name, r.RunnerType, wantType)
		}
		var changed []string
		for rel := range s.Write {
			changed = append(changed, rel)
		}
		if strings.Join(r.ChangedFiles, ",") != strings.Join(changed, ",") {
			t.Errorf("%s: changed files %v, want %v", name, r.ChangedFiles, changed)
		}
		if wantType == runnerAider {
			if r.ChecksPassed == nil || len(r.Checks) == 0 {
				t.Errorf("%s: the harness ran no checks: %+v", name, r)
			}
			note, _ := os.ReadFile(filepath.Join(work, name, standInTestCmd))
			if !strings.HasPrefix(string(note), w.testCmdExit+"\n") {
				t.Errorf("%s: aider's --test-cmd gave %q, want %q", name, note, w.testCmdExit)
			}
		} else if r.ChecksPassed != nil {
			t.Errorf("%s: checks recorded for flow, which runs its own", name)
		}
	}
	if r := f.Results[11]; r.Reason != "failing checks: test" {
		t.Errorf("the wrong fix's reason %q, want the failing check named", r.Reason)
	}

	if len(f.ByRunner) != 3 {
		t.Fatalf("by runner %+v", f.ByRunner)
	}
	ai := f.ByRunner[2]
	if ai.Runner != "aider" || ai.Summary.Runs != 4 || ai.Summary.Passed != 2 || ai.Summary.Verified != 2 || ai.Summary.FalseVerified != 1 ||
		ai.Summary.ModelCalls != 5 || ai.Summary.PromptTokens != 3200 || ai.Summary.Server == nil || ai.Summary.Server.Requests != 5 {
		t.Errorf("aider's summary %+v", ai)
	}
	if af := f.ByRunner[1].Summary; af.Runs != 4 || af.Passed != 4 || af.Verified != 4 || af.FalseVerified != 0 {
		t.Errorf("after's summary %+v", af)
	}
	if bf := f.ByRunner[0].Summary; bf.Verified != 1 || bf.FalseVerified != 1 || bf.Passed != 0 {
		t.Errorf("before's summary %+v", bf)
	}
	st := f.Settings
	if len(st.Runners) != 3 || st.Runners[0].Label != "before" || st.Runners[2].Type != runnerAider || st.Runners[2].Version != "0.0.0-standin" ||
		st.FlowVersion != "0.0.0-standin" || st.ServerLog != serverLog {
		t.Errorf("settings %+v", st)
	}
	if st.Peer == nil || !st.Peer.ChecksAsTestCmd || st.Peer.NumCtx != 8192 || !slices.Contains(st.Peer.Flags, "--no-auto-commits") || st.Peer.VerifiedRule == "" {
		t.Errorf("peer settings %+v", st.Peer)
	}
	var args []string
	readJSON(t, filepath.Join(work, goT+"-1-aider", aiderArgsFile), &args)
	if i := slices.Index(args, "--test-cmd"); i < 0 || !strings.Contains(args[i+1], "go vet ./... && go test ./...") {
		t.Errorf("aider's command line %q lacks the task's checks", args)
	}

	if strings.Contains(stderr.String(), "another client") {
		t.Errorf("a run's own requests were taken for another client's:\n%s", stderr.String())
	}
	if line := ProgressLine(1, 1, Result{RunnerType: runnerFlow, ModelCalls: 6, Server: &ServerFigures{Requests: 12}}, false); !strings.Contains(line, "another client?") {
		t.Errorf("a flow run with more server requests than model calls is not flagged: %s", line)
	}
	if !strings.Contains(stderr.String(), "[3/12] go-stats-median          rep 1  aider") {
		t.Errorf("no progress line naming the runner:\n%s", stderr.String())
	}
	table := stdout.String()
	lines := strings.Split(table, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, goT) })
	if at < 1 || !strings.Contains(lines[0], "false verified") || !strings.Contains(lines[0], "server requests") ||
		len(lines) < at+9 || !strings.Contains(lines[at], "before") || !strings.Contains(lines[at+1], "after") ||
		!strings.Contains(lines[at+2], "aider") || !strings.HasPrefix(lines[at+3], pyT) || !strings.HasPrefix(lines[at+6], "all tasks") {
		t.Errorf("the table does not put the runners side by side per task and in the totals:\n%s", table)
	}
	for _, want := range []string{
		"aider (aider 0.0.0-standin): runs 4 · pass rate 50% (2) · verified rate 50% (2) · false verified 1",
		"after (flow 0.0.0-standin): runs 4 · pass rate 100% (4) · verified rate 100% (4) · false verified 0",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

// TestRunnerAgentSettings: a build's own [agent] settings follow -agent's
// in its runs' configuration.
func TestRunnerAgentSettings(t *testing.T) {
	o := &Options{Agent: "brief_chars = 0", BaseURL: "http://x", Model: "m", API: "native"}
	text := operatorConfig(Runner{Agent: `edit_format = "whole"`}.options(o), &Task{}, "/ws")
	if !strings.Contains(text, "[agent]\nbrief_chars = 0\nedit_format = \"whole\"\n") {
		t.Errorf("configuration:\n%s\nwant both settings in one [agent] table", text)
	}
	if o.Agent != "brief_chars = 0" {
		t.Errorf("-agent became %q; the build's settings must not leak into the options", o.Agent)
	}
}
