package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"flow/internal/test/ollamatest"
)

// needPython returns the python of the MCP Python SDK's venv
// (scripts/mcp-python.sh, or $FLOW_TEST_PYTHON_BIN) and the client's
// directory, or skips (fails when FLOW_TEST_PYTHON=required, as in CI).
func needPython(t *testing.T) (string, string) {
	t.Helper()
	dir, _ := filepath.Abs("../../mcp/testdata/interop-python")
	py := os.Getenv("FLOW_TEST_PYTHON_BIN")
	var err error
	if py == "" {
		var out []byte
		out, err = exec.Command("../../scripts/mcp-python.sh", "env").Output()
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "FLOW_TEST_PYTHON_BIN="); ok {
				py = v
			}
		}
	}
	if err == nil {
		err = exec.Command(py, "-c", "import mcp.client.session").Run()
	}
	if err != nil {
		msg := "the MCP Python SDK is not installed (scripts/mcp-python.sh prepare): " + err.Error()
		if os.Getenv("FLOW_TEST_PYTHON") == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py, dir
}

// TestPythonSDKInterop drives `flow serve` with the official MCP Python
// SDK (mcp/testdata/interop-python): initialize, the tools and their
// schemas, a verified flow_run with progress, a flow_run cancelled with
// notifications/cancelled (its check's process killed), arguments off the
// schema read as a tool result, a check cancelled with tasks/cancel, and a
// run made as a task, left at a check by the SDK's own shutdown of its
// server and collected, verified, by a new client from a new server.
func TestPythonSDKInterop(t *testing.T) {
	t.Parallel()
	py, dir := needPython(t)
	ws := workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv := ollamatest.New(t,
		// The verified run.
		ollamatest.Turn{Content: "Plan: add A."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
		// The run cancelled at its check.
		ollamatest.Turn{Content: "Plan: run the slow check."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			call("c2", "file_write", map[string]any{"path": "cancel-me", "content": "x"}),
			call("c3", "flow_check", map[string]any{"name": "slow"}),
		}},
		// The run made as a task, which waits at its gate check.
		ollamatest.Turn{Content: "Plan: add B."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			call("c4", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n\nfunc B() {}\n"}),
			call("c5", "flow_check", map[string]any{"name": "gate"}),
		}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[verify]
# The scripted runs add code, not a test: they are verified on their checks
# alone (doc/design.md §8.7), which is what this protocol test is about.
behaviour_preserving = true
[checks.lint]
cmd = ["grep", "-q", "package", "a.go"]
kind = "lint"
filetypes = ["go"]
[checks.slow]
cmd = ["sh", "-c", "if [ -f cancel-me ]; then rm cancel-me; echo $$ > slow.pid; touch slow-started; exec sleep 300; fi"]
required = false
[checks.tasky]
cmd = ["sh", "-c", "if [ -f tasky-go ]; then rm tasky-go; echo $$ > tasky.pid; touch tasky-started; exec sleep 300; fi"]
required = false
[checks.gate]
cmd = ["sh", "-c", "if [ -f gate-armed ]; then rm gate-armed; touch gate-started; while [ ! -e go-on ]; do sleep 0.05; done; fi"]
required = false
`)
	killWorkers(t, cfg)
	environ := hermeticEnv(t)
	cmd := exec.Command(py, filepath.Join(dir, "client.py"))
	cmd.Dir = dir
	cmd.Env = append(environ, "FLOW_BIN="+flowBin, "FLOW_CONFIG="+cfg, "FLOW_WORKSPACE="+ws,
		"FLOW_TASK=add A", "FLOW_CANCEL_TASK=slow", "FLOW_TASK_RUN=add B")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python client: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	var got struct {
		Protocol        string
		Server          string
		TasksCapability bool `json:"tasks_capability"`
		Tools           map[string]struct {
			Input       map[string]any
			Output      bool
			TaskSupport *string `json:"task_support"`
			ReadOnly    *bool   `json:"read_only"`
		}
		Status struct {
			IsError bool `json:"is_error"`
			Status  string
		}
		Run struct {
			IsError  bool `json:"is_error"`
			Status   string
			Verified bool
			Progress []string
		}
		Invalid struct {
			IsError bool `json:"is_error"`
			Text    string
			Status  string
		}
		Cancel struct {
			Started   bool
			Answered  bool
			Error     string
			BusyAfter bool `json:"busy_after"`
		}
		TaskCancel struct {
			Created, Reply, Message string
		} `json:"task_cancel"`
		Task struct {
			ID              string
			Created         string
			AtGate          bool    `json:"at_gate"`
			ShutdownSeconds float64 `json:"shutdown_seconds"`
		}
		Collect struct {
			Status, Message string
			Listed          []string
			IsError         bool   `json:"is_error"`
			ResultStatus    string `json:"result_status"`
			Verified        bool
			Related         string
			Final           string
		}
		Error string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	if got.Error != "" {
		t.Fatalf("client error: %s\n%s\nstderr: %s", got.Error, out, stderr.String())
	}
	if got.Protocol != "2025-11-25" || got.Server != "flow" || !got.TasksCapability {
		t.Errorf("initialize: %s %s tasks %v", got.Protocol, got.Server, got.TasksCapability)
	}
	var names []string
	for name, tool := range got.Tools {
		names = append(names, name)
		if tool.Input["type"] != "object" || tool.Input["additionalProperties"] != false || !tool.Output {
			t.Errorf("%s schemas: input %v, output %v; want closed objects", name, tool.Input, tool.Output)
		}
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "flow_check,flow_review,flow_run,flow_status" {
		t.Errorf("tools = %v", names)
	}
	if run := got.Tools["flow_run"]; run.TaskSupport == nil || *run.TaskSupport != "optional" || !slices.Equal(anyStrings(run.Input["required"]), []string{"task"}) {
		t.Errorf("flow_run: task support %v, required %v", run.TaskSupport, run.Input["required"])
	}
	if st := got.Tools["flow_status"]; st.ReadOnly == nil || !*st.ReadOnly || st.TaskSupport != nil {
		t.Errorf("flow_status: read-only %v, task support %v", st.ReadOnly, st.TaskSupport)
	}
	if got.Status.IsError || got.Status.Status != "ok" {
		t.Errorf("flow_status = %+v", got.Status)
	}
	if got.Run.IsError || !got.Run.Verified || len(got.Run.Progress) < 5 {
		t.Errorf("flow_run = %+v, want verified with progress", got.Run)
	}
	if !got.Invalid.IsError || got.Invalid.Status != "error" || !strings.HasPrefix(got.Invalid.Text, `Invalid arguments for flow_run: argument "task" must be a string`) {
		t.Errorf("flow_run {task: 3} = %+v, want an isError result the model can read", got.Invalid)
	}
	if !got.Cancel.Started || got.Cancel.Answered || got.Cancel.Error != "" || got.Cancel.BusyAfter {
		t.Errorf("cancelled flow_run = %+v, want no answer and the workspace free", got.Cancel)
	}
	if got.TaskCancel.Created != "working" || got.TaskCancel.Reply != "cancelled" || !strings.HasPrefix(got.TaskCancel.Message, "cancelled: The check tasky was cancelled") {
		t.Errorf("flow_check cancelled with tasks/cancel = %+v", got.TaskCancel)
	}
	for _, f := range []string{"slow.pid", "tasky.pid"} {
		b, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		waitGone(t, "the cancelled check of "+f, func() bool { return syscall.Kill(pid, 0) != nil })
	}
	if got.Task.Created != "working" || !got.Task.AtGate || got.Task.ShutdownSeconds > 1.5 {
		t.Errorf("task = %+v, want created working, left at its gate by a shutdown that did not need the SDK's SIGTERM", got.Task)
	}
	c := got.Collect
	if c.Status != "working" || !strings.Contains(c.Message, "gate") || !slices.Contains(c.Listed, got.Task.ID) {
		t.Errorf("the task from a new server = %+v, want it working at its gate and listed", c)
	}
	if c.IsError || c.ResultStatus != "ok" || !c.Verified || c.Related != got.Task.ID || c.Final != "completed" {
		t.Errorf("its result = %+v, want the verified run, completed", c)
	}
	if s := stderr.String(); s != "" {
		t.Errorf("stderr (flow serve's and the client's) = %q, want nothing", s)
	}
	waitGone(t, "flow serve and its task workers", func() bool { return !processRunning(cfg) })
}

// anyStrings converts a decoded JSON array of strings.
func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestPythonSDKElicitation: the official MCP Python SDK as a client that
// declared elicitation (doc/design.md §10.12). After a flow_run that leaves
// a change flow does not verify, flow asks it once whether to keep or
// revert the change; the SDK's answer goes through flow_review's code: a
// revert puts the file back, a keep leaves the change and marks its hunks
// kept.
func TestPythonSDKElicitation(t *testing.T) {
	t.Parallel()
	py, dir := needPython(t)
	for _, answer := range []string{"revert", "keep"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t)
			writeFile(t, ws, "a.go", "package a\n")
			srv := ollamatest.New(t,
				ollamatest.Turn{Content: "Plan: add A."},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
				ollamatest.Turn{Content: "Done."},
			)
			cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["grep", "-q", "package", "a.go"]
kind = "lint"
filetypes = ["go"]
`)
			cmd := exec.Command(py, filepath.Join(dir, "elicit.py"))
			cmd.Dir = dir
			cmd.Env = append(hermeticEnv(t), "FLOW_BIN="+flowBin, "FLOW_CONFIG="+cfg, "FLOW_WORKSPACE="+ws,
				"FLOW_TASK=add A", "FLOW_ANSWER="+answer)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python client: %v\n%s\nstderr: %s", err, out, stderr.String())
			}
			var got struct {
				Questions []struct {
					Message string
					Schema  map[string]any
				}
				Run struct {
					IsError  bool `json:"is_error"`
					Status   string
					Verified bool
					RunID    string `json:"run_id"`
					Decision map[string]any
				}
				Hunks []string
				Error string
			}
			if err := json.Unmarshal(out, &got); err != nil || got.Error != "" {
				t.Fatalf("client output %s (%v)\nstderr: %s", out, err, stderr.String())
			}
			t.Logf("python SDK client: %s", out)
			if len(got.Questions) != 1 || !strings.Contains(got.Questions[0].Message, got.Run.RunID) || !strings.Contains(got.Questions[0].Message, "a.go") {
				t.Fatalf("questions = %+v, want one naming run %s and a.go", got.Questions, got.Run.RunID)
			}
			props, _ := got.Questions[0].Schema["properties"].(map[string]any)
			decision, _ := props["decision"].(map[string]any)
			if !slices.Equal(anyStrings(decision["enum"]), []string{"keep", "revert", "later"}) {
				t.Errorf("schema = %v", got.Questions[0].Schema)
			}
			if got.Run.Verified || got.Run.Decision["answer"] != answer {
				t.Errorf("run = %+v", got.Run)
			}
			data, _ := os.ReadFile(filepath.Join(ws, "a.go"))
			wantFile, wantState := "package a\n", "reverted"
			if answer == "keep" {
				wantFile, wantState = "package a\n\nfunc A() {}\n", "kept"
			}
			if string(data) != wantFile || len(got.Hunks) == 0 {
				t.Errorf("a.go = %q, hunks %v; want %q", data, got.Hunks, wantFile)
			}
			for _, s := range got.Hunks {
				if s != wantState {
					t.Errorf("hunks %v, want all %s", got.Hunks, wantState)
				}
			}
		})
	}
}
