package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

func TestHeader(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		wants []string
	}{
		{"trusted one model", testOptions, []string{"workspace /work/demo", "trusted", "model qwen3"}},
		{
			"read-only per-role models",
			Options{Workspace: "/srv/app", Models: report.Models{Planner: "a", Coder: "b", Reviewer: "c"}},
			[]string{"workspace /srv/app", "read-only", "planner a · coder b · reviewer c"},
		},
		{
			"one model, the reviewer on another server",
			Options{Workspace: "/srv/app", Models: report.Models{Planner: "a", Coder: "a", Reviewer: "a",
				Servers: &report.RoleServers{Planner: "ollama", Coder: "ollama", Reviewer: "gpu"}}},
			[]string{"planner a · coder a · reviewer a on gpu"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestUI(t, newFake(), tt.opts)
			header := strings.Join(strings.SplitN(screen(m), "\n", 3)[:2], "\n")
			assertContains(t, header, tt.wants...)
			assertContains(t, screen(m), prompt)
		})
	}
}

func TestHelpListsCommands(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	settle(t, m, submit(m, "/help"))
	got := screen(m)
	for _, c := range commandHelp {
		assertContains(t, got, c.usage+" ")
	}
	assertContains(t, got, "› /help")
}

func TestStatusRendering(t *testing.T) {
	rt := newFake()
	rt.status = report.Status{
		Status: "ok", Version: "1.2.3", Workspace: "/work/demo", Trusted: true,
		Backend:  report.Backend{Type: "ollama", API: "native", BaseURL: "http://127.0.0.1:11434", Connectivity: "unverified"},
		Models:   report.Models{Planner: "qwen3", Coder: "qwen3", Reviewer: "qwen3"},
		Checks:   []report.CheckSummary{{Name: "go-test", Required: true, Kind: "test", Filetypes: []string{"go"}}},
		Editor:   report.Editor{Status: "unavailable"},
		Warnings: []string{"journal off"},
		LastReport: map[string]any{
			"run_id": "r1", "task": "fix it", "status": "ok", "verified": true,
		},
	}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/status"))
	assertContains(t, screen(m),
		"status ok · flow 1.2.3",
		"  workspace  /work/demo",
		"  mode  trusted",
		"  backend  ollama native http://127.0.0.1:11434 (connectivity unverified)",
		"  models  model qwen3",
		"  check  go-test  required  test  go",
		"  busy  no",
		"  last run  ok · verified · fix it · r1",
		"  warning  journal off",
	)
}

// runScript is a run with a tool call, a failing check, a rejecting
// reviewer and one changed file.
func runScript(rt *fakeRuntime) {
	rt.events = []progress.Event{
		{Kind: progress.RunStart, RunID: "r-42", Message: "fix the bug"},
		{Kind: progress.RoleEnd, Role: "planner", Status: "skipped", Message: "the coder has every file"},
		{Kind: progress.RoleStart, Role: "coder", Message: "qwen3"},
		{Kind: progress.ModelTurn, Role: "coder", Turn: 1},
		{Kind: progress.ModelReply, Role: "coder", Turn: 1, Status: "ok", DurationMS: 800},
		{Kind: progress.ToolStart, Role: "coder", Turn: 1, Tool: "file_edit", ToolCallID: "c1", Message: "main.go"},
		{Kind: progress.ToolEnd, Role: "coder", Turn: 1, Tool: "file_edit", ToolCallID: "c1", Message: "main.go", Status: "ok", DurationMS: 3},
		{Kind: progress.RoleEnd, Role: "coder", Status: "ok", Turn: 2, DurationMS: 2500},
		{Kind: progress.CheckStart, Role: progress.PhaseVerification, Check: "go-test"},
		{Kind: progress.CheckEnd, Role: progress.PhaseVerification, Check: "go-test", Status: "failed", DurationMS: 1200},
		{Kind: progress.Verification, Role: progress.PhaseVerification, Status: "failed",
			Verification: &report.Verification{Status: "failed", Reason: "required check go-test failed"}},
	}
	one, no := 1, false
	rt.report = report.Run{
		Status: "failed", RunID: "r-42", DurationMS: 4500, ChangedFiles: []string{"main.go"},
		Checks: []report.CheckResult{{Name: "go-test", Status: "failed", Returncode: &one, DurationMS: 1200}},
		Roles: []report.Role{
			{Role: "coder", Status: "ok"},
			{Role: "reviewer", Status: "ok", Approved: &no, Summary: "tests fail", Issues: []string{"TestX fails"}},
		},
		Summary: "tests fail",
	}
}

func TestRunShowsLiveEventsThenSummary(t *testing.T) {
	rt := newFake()
	runScript(rt)
	rt.gate = make(chan struct{})
	m := newTestUI(t, rt, testOptions)
	cmd := submit(m, "fix the bug")
	wait(t, rt.emitted, "the run's events")

	// The events are shown while the run is still going.
	msg := jobBatch(t, cmd)
	_, next := m.Update(msg)
	live := screen(m)
	assertContains(t, live,
		"› fix the bug",
		"run  started  r-42",
		"planner  skipped  the coder has every file",
		"coder  start  qwen3",
		"coder  turn 1  ok  800ms",
		"coder  file_edit main.go  ok  3ms",
		"coder  ok  2 turns  2.5s",
		"check  go-test  failed  1.2s",
		"verify  failed  required check go-test failed",
		"run in progress",
	)
	assertLacks(t, live, "run failed ·")
	if n := strings.Count(live, "file_edit main.go"); n != 1 {
		t.Errorf("tool call shown %d times, want once (the end replaces the start)", n)
	}

	close(rt.gate)
	settle(t, m, next)
	got := screen(m)
	assertContains(t, got,
		"run failed · not verified · 1 changed file · 4.5s",
		"  changed  main.go",
		"  failing check  go-test  failed  exit 1  1.2s",
		"  reviewer  rejected  tests fail",
		"  issue  TestX fails",
		"  run id  r-42",
	)
	assertLacks(t, got, "run in progress", "…")
	if tasks, _, _, _, _ := rt.calls(); !slices.Equal(tasks, []string{"fix the bug"}) {
		t.Errorf("tasks = %q, want [fix the bug]", tasks)
	}
	if m.job != nil {
		t.Error("job still set after the run ended")
	}
}

func TestRunSummaryVerified(t *testing.T) {
	rt := newFake()
	rt.report = report.Run{Status: "ok", Verified: true, ChangedFiles: []string{"a.go", "b.go"}, DurationMS: 900}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "add a flag"))
	assertContains(t, screen(m), "run ok · verified · 2 changed files · 900ms", "  changed  a.go", "  changed  b.go")
}

func TestEventTextIsSanitised(t *testing.T) {
	rt := newFake()
	rt.events = []progress.Event{{Kind: progress.ToolEnd, Role: "coder", Tool: "file_read", Message: "x\x1b[2Jy", Status: "ok"}}
	rt.report = report.Run{Status: "error", Error: "bad\x1b]0;pwned\x07"}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "go"))
	raw := m.View().Content
	for _, bad := range []string{"\x1b[2J", "\x1b]0;pwned"} {
		if strings.Contains(raw, bad) {
			t.Errorf("view carries the escape sequence %q from event text", bad)
		}
	}
	assertContains(t, screen(m), "coder  file_read x?[2Jy  ok")
}

func TestClearEmptiesLog(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	settle(t, m, submit(m, "/help"))
	assertContains(t, screen(m), "/build <request>")
	settle(t, m, submit(m, "/clear"))
	if got := logText(m); got != "" {
		t.Errorf("log after /clear = %q, want empty", got)
	}
	assertLacks(t, screen(m), "/build <request>", "› /help", "› /clear")
}

func TestHistoryUpDown(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	settle(t, m, submit(m, "/help"))
	settle(t, m, submit(m, "/tools"))
	typeText(m, "draft")
	steps := []struct {
		key  string
		want string
	}{
		{"up", "/tools"},
		{"up", "/help"},
		{"up", "/help"}, // stays at the oldest entry
		{"down", "/tools"},
		{"down", "draft"},
		{"down", "draft"},
	}
	for i, s := range steps {
		k := keyUp
		if s.key == "down" {
			k = keyDown
		}
		press(m, k)
		if got := m.input.Value(); got != s.want {
			t.Fatalf("step %d (%s): input = %q, want %q", i, s.key, got, s.want)
		}
	}
}

func TestModelCommand(t *testing.T) {
	installed := []model.ModelInfo{{Name: "qwen3:latest"}, {Name: "llama3:8b"}}
	tests := []struct {
		name      string
		models    []model.ModelInfo
		modelsErr error
		line      string
		want      string
		wantSet   string
	}{
		{"no argument", installed, nil, "/model", msgModelUsage, ""},
		{"unknown", installed, nil, "/model nope", `model "nope" is not installed; installed models: qwen3:latest, llama3:8b`, ""},
		{"none installed", nil, nil, "/model nope", "no models are installed", ""},
		{"unreachable", nil, errors.New("dial tcp: connection refused"), "/model qwen3", "the model backend is unreachable: dial tcp: connection refused", ""},
		{"exact", installed, nil, "/model llama3:8b", "model  llama3:8b for every role", "llama3:8b"},
		{"latest tag", installed, nil, "/model qwen3", "model  qwen3:latest for every role", "qwen3:latest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newFake()
			rt.models, rt.modelsErr = tt.models, tt.modelsErr
			m := newTestUI(t, rt, testOptions)
			settle(t, m, submit(m, tt.line))
			assertContains(t, screen(m), tt.want)
			if _, _, _, _, set := rt.calls(); set != tt.wantSet {
				t.Errorf("SetModel got %q, want %q", set, tt.wantSet)
			}
			if tt.wantSet != "" {
				assertContains(t, strings.SplitN(screen(m), "\n", 3)[1], "model "+tt.wantSet)
			}
		})
	}
}

func TestModelsAndTools(t *testing.T) {
	rt := newFake()
	rt.models = []model.ModelInfo{{Name: "qwen3"}, {Name: "llama3:8b"}}
	rt.tools = []string{"file_read", "file_edit"}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/models"))
	settle(t, m, submit(m, "/tools"))
	assertContains(t, screen(m), "models  2 installed models", "  qwen3  (in use)", "  llama3:8b\n",
		"tools  2 tools", "  file_read", "  file_edit")
}

func TestBuildCommand(t *testing.T) {
	rt := newFake()
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/build"))
	assertContains(t, screen(m), "error  "+msgBuildUsage)
	settle(t, m, submit(m, "/build a small cli"))
	if tasks, _, _, _, _ := rt.calls(); !slices.Equal(tasks, []string{"Build a small cli"}) {
		t.Errorf("tasks = %q, want [Build a small cli]", tasks)
	}
}

func TestLegacyAndUnknownCommands(t *testing.T) {
	for _, line := range []string{"/plugins", "/evolve", "/memory", "/feedback"} {
		t.Run(line, func(t *testing.T) {
			m := newTestUI(t, newFake(), testOptions)
			settle(t, m, submit(m, line))
			assertContains(t, logText(m), "unavailable  "+msgLegacy)
		})
	}
	t.Run("unknown", func(t *testing.T) {
		rt := newFake()
		m := newTestUI(t, rt, testOptions)
		settle(t, m, submit(m, "/frobnicate now"))
		assertContains(t, screen(m), "error  Unknown command; try /help")
		if tasks, _, _, _, _ := rt.calls(); len(tasks) != 0 {
			t.Errorf("an unknown command ran tasks %q", tasks)
		}
	})
}

func TestCheckCommand(t *testing.T) {
	two := 2
	rt := newFake()
	rt.checkReport = report.CheckReport{
		Status: "failed", Reason: "required check go-test failed",
		Checks: []report.CheckResult{{Name: "go-test", Status: "failed", Returncode: &two, DurationMS: 40, Stderr: "ok pkg\n--- FAIL: TestX\n"}},
	}
	m := newTestUI(t, rt, testOptions)
	settle(t, m, submit(m, "/check go-test"))
	assertContains(t, screen(m), "check  go-test  failed  40ms", "check failed · not verified",
		"  go-test  failed  exit 2  40ms", "    --- FAIL: TestX", "  reason  required check go-test failed")
	if _, checks, _, _, _ := rt.calls(); !slices.Equal(checks, []string{"go-test"}) {
		t.Errorf("checks = %q, want [go-test]", checks)
	}
}

func TestUndoCommand(t *testing.T) {
	tests := []struct {
		name   string
		result report.Undo
		err    error
		wants  []string
	}{
		{"no journal", report.Undo{}, fmt.Errorf("open: %w", ErrUndoUnavailable), []string{"undo unavailable · undo is unavailable until the journal exists"}},
		{"error", report.Undo{}, errors.New("disk on fire"), []string{"error  undo failed: disk on fire"}},
		{
			"restored",
			report.Undo{Status: "ok", RunID: "r-1", Restored: []string{"a.go"}, Removed: []string{"new.go"}, Message: "undid 2 files",
				Diffs: []report.FileDiff{{Path: "a.go", Added: 1, Removed: 1, Diff: "@@ -1 +1 @@\n-package b\n+package a\n"}}},
			nil,
			[]string{"undo ok · run r-1", "  restored  a.go  +1 -1\n    @@ -1 +1 @@\n    -package b\n    +package a", "  removed  new.go", "  message  undid 2 files"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newFake()
			rt.undoResult, rt.undoErr = tt.result, tt.err
			m := newTestUI(t, rt, testOptions)
			settle(t, m, submit(m, "/undo"))
			assertContains(t, screen(m), tt.wants...)
		})
	}
}

func TestCtrlCCancelsRun(t *testing.T) {
	rt := newFake()
	rt.gate = make(chan struct{})
	rt.events = []progress.Event{{Kind: progress.ToolStart, Role: "coder", Turn: 1, Tool: "file_read", ToolCallID: "c1", Message: "a.go"}}
	rt.report = report.Run{ChangedFiles: []string{"main.go"}}
	m := newTestUI(t, rt, testOptions)
	cmd := submit(m, "long task")
	wait(t, rt.emitted, "the run to start")

	if c := press(m, keyCtrlC); isQuit(t, c) {
		t.Fatal("Ctrl-C during a run quit the program")
	}
	assertContains(t, screen(m), msgCancelling)
	wait(t, rt.cancelled, "the run to observe the cancellation")
	if quit := settle(t, m, cmd); quit {
		t.Error("the cancelled run quit the program")
	}
	assertContains(t, screen(m), "run cancelled · not verified · 1 changed file", "edits already written remain (see /undo)",
		"coder  file_read a.go  stopped")
	assertLacks(t, screen(m), "a.go  …")
	if m.job != nil {
		t.Error("job still set after the cancelled run returned")
	}
}

func TestOneRunAtATime(t *testing.T) {
	rt := newFake()
	rt.gate = make(chan struct{})
	rt.status = report.Status{Status: "ok", Busy: true}
	m := newTestUI(t, rt, testOptions)
	cmd := submit(m, "first")
	wait(t, rt.emitted, "the run to start")

	for _, line := range []string{"second", "/check", "/build x", "/undo", "/model qwen3"} {
		settle(t, m, submit(m, line))
	}
	tasks, checks, undos, _, _ := rt.calls()
	if len(tasks) != 1 || len(checks) != 0 || len(undos) != 0 {
		t.Errorf("while a run was in progress: tasks %q, checks %q, undos %q; want only the first task", tasks, checks, undos)
	}
	const msgBusy = "busy: a run is already in progress in this flow process; wait for it to finish or stop it"
	if n := strings.Count(screen(m), msgBusy); n != 5 {
		t.Errorf("%q shown %d times, want 5", msgBusy, n)
	}
	settle(t, m, submit(m, "/help"))
	settle(t, m, submit(m, "/status"))
	assertContains(t, screen(m), "/build <request>", "  busy  yes")
	settle(t, m, submit(m, "/clear"))
	if got := logText(m); got != "" {
		t.Errorf("log after /clear during a run = %q, want empty", got)
	}
	close(rt.gate)
	settle(t, m, cmd)
	assertContains(t, screen(m), "run ok · not verified")
}

func TestCtrlCWhenIdle(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	if isQuit(t, press(m, keyCtrlC)) {
		t.Fatal("first Ctrl-C quit")
	}
	assertContains(t, screen(m), msgQuitArmed)
	typeText(m, "x") // any other key disarms
	assertLacks(t, screen(m), msgQuitArmed)
	if isQuit(t, press(m, keyCtrlC)) {
		t.Fatal("Ctrl-C after another key quit")
	}
	if m.input.Value() != "" {
		t.Errorf("Ctrl-C left the input %q, want it cleared", m.input.Value())
	}
	if !isQuit(t, press(m, keyCtrlC)) {
		t.Error("second Ctrl-C did not quit")
	}
}

func TestCtrlDQuits(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	typeText(m, "ab")
	if isQuit(t, press(m, keyCtrlD)) {
		t.Error("Ctrl-D with text in the input quit")
	}
	m.input.Reset()
	if !isQuit(t, press(m, keyCtrlD)) {
		t.Error("Ctrl-D on an empty input did not quit")
	}
}

func TestQuitCommands(t *testing.T) {
	for _, line := range []string{"/quit", "/exit"} {
		t.Run(line, func(t *testing.T) {
			m := newTestUI(t, newFake(), testOptions)
			if !isQuit(t, submit(m, line)) {
				t.Errorf("%s did not quit", line)
			}
		})
	}
}

func TestQuitDuringRunWaitsForIt(t *testing.T) {
	rt := newFake()
	rt.gate = make(chan struct{})
	m := newTestUI(t, rt, testOptions)
	cmd := submit(m, "long task")
	wait(t, rt.emitted, "the run to start")
	if c := press(m, keyCtrlD); isQuit(t, c) {
		t.Fatal("Ctrl-D during a run quit before the run returned")
	}
	wait(t, rt.cancelled, "the run to observe the cancellation")
	if !settle(t, m, cmd) {
		t.Error("the program did not quit once the cancelled run returned")
	}
	if !rt.returned.Load() {
		t.Error("quit before the run returned")
	}
	assertContains(t, screen(m), "run cancelled")
}

func TestLogIsBounded(t *testing.T) {
	m := newTestUI(t, newFake(), testOptions)
	for i := range maxLogLines + 10 {
		m.appendLines(logLine{text: fmt.Sprintf("line %d", i)})
	}
	if len(m.log) != maxLogLines {
		t.Fatalf("log has %d lines, want %d", len(m.log), maxLogLines)
	}
	if got := m.log[len(m.log)-1].text; got != fmt.Sprintf("line %d", maxLogLines+9) {
		t.Errorf("last line = %q", got)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{{0, ""}, {3, "3ms"}, {1200, "1.2s"}, {125_000, "2m05s"}}
	for _, tt := range tests {
		if got := duration(tt.ms); got != tt.want {
			t.Errorf("duration(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}
