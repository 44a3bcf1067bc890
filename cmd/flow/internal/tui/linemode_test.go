package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"flow/runtime/model"
	"flow/runtime/report"
)

// runLineMode runs Run in line mode over input and returns the exit code
// and the decoded output objects, failing on any line that is not one JSON
// object.
func runLineMode(t *testing.T, rt Runtime, input string) (int, []map[string]any) {
	t.Helper()
	var out bytes.Buffer
	code := Run(t.Context(), rt, Options{IsTerminal: false}, strings.NewReader(input), &out)
	return code, decodeLines(t, out.String())
}

// decodeLines decodes one JSON object per line.
func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	if strings.Contains(out, "\x1b") {
		t.Errorf("line mode output has an escape sequence: %q", out)
	}
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var obj map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("output line %q is not a JSON object: %v", line, err)
		}
		if dec.More() {
			t.Fatalf("output line %q holds more than one JSON value", line)
		}
		objs = append(objs, obj)
	}
	return objs
}

func TestLineModeOneObjectPerLine(t *testing.T) {
	rt := newFake()
	rt.status = report.Status{Status: "ok", Workspace: "/work/demo", Checks: []report.CheckSummary{}, Warnings: []string{}}
	rt.report = report.Run{Status: "ok", Verified: true, ChangedFiles: []string{"a.go"}}
	code, objs := runLineMode(t, rt, "/status\n\n   \nfix the bug\n/nope\n/quit\nnot run\n")
	if code != ExitOK {
		t.Errorf("exit code = %d, want 0", code)
	}
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want 3 (status, run, error): %v", len(objs), objs)
	}
	if objs[0]["workspace"] != "/work/demo" || objs[0]["status"] != "ok" {
		t.Errorf("status answer = %v", objs[0])
	}
	if objs[1]["task"] != "fix the bug" || objs[1]["verified"] != true {
		t.Errorf("run answer = %v", objs[1])
	}
	if objs[2]["status"] != "error" || objs[2]["error"] != msgUnknown {
		t.Errorf("unknown command answer = %v", objs[2])
	}
	if tasks, _, _, _, _ := rt.calls(); !slices.Equal(tasks, []string{"fix the bug"}) {
		t.Errorf("tasks = %q, want only the task before /quit", tasks)
	}
}

func TestLineModeAnswers(t *testing.T) {
	installed := []model.ModelInfo{{Name: "qwen3:latest"}}
	tests := []struct {
		name  string
		setup func(*fakeRuntime)
		line  string
		want  map[string]any
	}{
		{"help", nil, "/help", map[string]any{"status": "ok", "note": msgHelpNote}},
		{"clear", nil, "/clear", map[string]any{"status": "ok", "note": msgHelpNote}},
		{"tools", func(f *fakeRuntime) { f.tools = []string{"file_read"} }, "/tools", map[string]any{"status": "ok", "tools": []any{"file_read"}}},
		{"no tools", nil, "/tools", map[string]any{"status": "ok", "tools": []any{}}},
		{"models", func(f *fakeRuntime) { f.models = installed }, "/models", map[string]any{"status": "ok", "models": []any{"qwen3:latest"}}},
		{"models unreachable", func(f *fakeRuntime) { f.modelsErr = errors.New("refused") }, "/models",
			map[string]any{"status": "error", "error": "cannot list the installed models: the model backend is unreachable: refused"}},
		{"model usage", nil, "/model", map[string]any{"status": "error", "error": msgModelUsage}},
		{"model unknown", func(f *fakeRuntime) { f.models = installed }, "/model x",
			map[string]any{"status": "error", "error": `model "x" is not installed; installed models: qwen3:latest`}},
		{"model ok", func(f *fakeRuntime) { f.models = installed }, "/model qwen3", map[string]any{"status": "ok", "model": "qwen3:latest"}},
		{"build usage", nil, "/build", map[string]any{"status": "error", "error": msgBuildUsage}},
		{"build", nil, "/build a cli", map[string]any{"status": "ok", "task": "Build a cli"}},
		{"check", func(f *fakeRuntime) { f.checkReport = report.CheckReport{Status: "failed", Reason: "r"} }, "/check go-test",
			map[string]any{"status": "failed", "reason": "r"}},
		{"legacy", nil, "/memory", map[string]any{"status": "unavailable", "error": msgLegacy}},
		{"undo unavailable", func(f *fakeRuntime) { f.undoErr = ErrUndoUnavailable }, "/undo",
			map[string]any{"status": "unavailable", "error": msgUndoUnavailable}},
		{"undo", func(f *fakeRuntime) {
			f.undoResult = report.Undo{Status: "ok", RunID: "r1"}
		}, "/undo r1",
			map[string]any{"status": "ok", "run_id": "r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newFake()
			if tt.setup != nil {
				tt.setup(rt)
			}
			code, objs := runLineMode(t, rt, tt.line+"\n")
			if code != ExitOK || len(objs) != 1 {
				t.Fatalf("Run = %d with %d objects, want 0 with 1", code, len(objs))
			}
			for k, want := range tt.want {
				got, _ := json.Marshal(objs[0][k])
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Errorf("%s answer[%q] = %s, want %s", tt.line, k, got, w)
				}
			}
		})
	}
}

func TestLineModeHelpListsCommands(t *testing.T) {
	_, objs := runLineMode(t, newFake(), "/help\n")
	got, _ := objs[0]["commands"].([]any)
	for _, want := range []string{"/status", "/check [name]", "/model <name>", "/build <request>", "/quit"} {
		if !slices.Contains(got, any(want)) {
			t.Errorf("commands %v lack %q", got, want)
		}
	}
}

func TestLineModeEOF(t *testing.T) {
	rt := newFake()
	code, objs := runLineMode(t, rt, "/tools\nlast task without newline")
	if code != ExitOK {
		t.Errorf("exit code at end of input = %d, want 0", code)
	}
	if len(objs) != 2 || objs[1]["task"] != "last task without newline" {
		t.Errorf("answers = %v, want the tools and the last task", objs)
	}
	if code, objs := runLineMode(t, rt, ""); code != ExitOK || len(objs) != 0 {
		t.Errorf("empty input: Run = %d with %v, want 0 and no output", code, objs)
	}
}

func TestLineModeTooLongLine(t *testing.T) {
	rt := newFake()
	input := strings.Repeat("x", maxLineBytes+10) + "\n/tools\n"
	code, objs := runLineMode(t, rt, input)
	if code != ExitOK || len(objs) != 2 {
		t.Fatalf("Run = %d with %d objects, want 0 with 2", code, len(objs))
	}
	if objs[0]["status"] != "error" || !strings.Contains(objs[0]["error"].(string), "longer than") {
		t.Errorf("too-long line answer = %v", objs[0])
	}
	if tasks, _, _, _, _ := rt.calls(); len(tasks) != 0 {
		t.Errorf("a too-long line ran as a task")
	}
}

func TestLineModeCancelled(t *testing.T) {
	t.Run("while reading", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan int, 1)
		go func() { done <- Run(ctx, newFake(), Options{}, pr, io.Discard) }()
		cancel()
		select {
		case code := <-done:
			if code != ExitInterrupted {
				t.Errorf("exit code = %d, want 130", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return after ctx was cancelled")
		}
	})
	t.Run("during a task", func(t *testing.T) {
		rt := newFake()
		rt.gate = make(chan struct{})
		rt.report = report.Run{ChangedFiles: []string{"a.go"}}
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-rt.emitted
			cancel()
		}()
		var out bytes.Buffer
		code := Run(ctx, rt, Options{}, strings.NewReader("long task\n/tools\n"), &out)
		if code != ExitInterrupted {
			t.Errorf("exit code = %d, want 130", code)
		}
		objs := decodeLines(t, out.String())
		if len(objs) != 1 || objs[0]["status"] != "cancelled" {
			t.Errorf("answers = %v, want only the cancelled report", objs)
		}
	})
}
