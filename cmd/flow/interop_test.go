package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// needNode returns the node binary and the interop client's directory, or
// skips (fails when FLOW_TEST_NODE=required, as in CI).
func needNode(t *testing.T) (string, string) {
	t.Helper()
	dir, _ := filepath.Abs("../../mcp/testdata/interop")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules/@modelcontextprotocol/sdk"))
	}
	if err != nil {
		msg := "the MCP TypeScript SDK is not installed (npm ci --prefix mcp/testdata/interop): " + err.Error()
		if os.Getenv("FLOW_TEST_NODE") == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, dir
}

// TestTypeScriptSDKInterop drives `flow serve` with the official MCP
// TypeScript SDK: list tools, flow_status, a real configured check, a
// verified flow_run with onprogress, and a flow_run aborted with an
// AbortSignal while its check runs — which must leave no process behind.
func TestTypeScriptSDKInterop(t *testing.T) {
	t.Parallel()
	node, dir := needNode(t)
	ws := workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv := ollamatest.New(t,
		// The verified run.
		ollamatest.Turn{Content: "Plan: add A."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
		// The aborted run: its check blocks until the client aborts.
		ollamatest.Turn{Content: "Plan: run the slow check."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			call("c2", "file_write", map[string]any{"path": "abort-me", "content": "x"}),
			call("c3", "flow_check", map[string]any{"name": "slow"}),
		}},
	)
	// The run made as an MCP task, after the aborted one's turns.
	taskTurns := []ollamatest.Turn{
		{Content: "Plan: add B."},
		{ToolCalls: []ollamatest.Call{call("c4", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc B() {}\n"})}},
		{Content: "Done."},
		{Content: approve},
	}
	srv.Enqueue(taskTurns...)
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
cmd = ["sh", "-c", "if [ -f abort-me ]; then echo $$ > slow.pid; touch slow-started; sleep 30; fi"]
required = false
[checks.tasky]
cmd = ["sh", "-c", "if [ -f tasky-go ]; then echo $$ > tasky.pid; touch tasky-started; exec sleep 300; fi"]
required = false
`)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"))
	cmd.Dir = dir
	cmd.Env = append(hermeticEnv(t),
		"FLOW_BIN="+flowBin, "FLOW_CONFIG="+cfg, "FLOW_TASK=add A", "FLOW_ABORT_TASK=slow",
		"FLOW_ABORT_MARKER="+filepath.Join(ws, "slow-started"),
		"FLOW_TASK_RUN=add B", "FLOW_TASK_MARKER="+filepath.Join(ws, "tasky-started"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		Tools  []string
		Status struct {
			IsError bool
			Status  string
		}
		Check struct {
			IsError  bool
			Status   string
			Verified bool
		}
		Run struct {
			IsError  bool
			Status   string
			Verified bool
			Progress []string
		}
		Abort struct {
			Rejected bool
			Error    string
		}
		After struct {
			Status string
			Busy   bool
		}
		TaskRun struct {
			Events            []string
			TaskID, Related   string
			IsError, Verified bool
			Status            string
		}
		TaskCancel struct {
			TaskID, Reply, Final, Error string
		}
		Error, Stderr string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, out)
	}
	if got.Error != "" {
		t.Fatalf("client error: %s\n%s", got.Error, out)
	}
	if strings.Join(got.Tools, ",") != "flow_run,flow_status,flow_check,flow_review" {
		t.Errorf("tools = %v", got.Tools)
	}
	if got.Status.IsError || got.Status.Status != "ok" {
		t.Errorf("flow_status = %+v", got.Status)
	}
	if got.Check.IsError || !got.Check.Verified {
		t.Errorf("flow_check = %+v, want verified", got.Check)
	}
	if got.Run.IsError || !got.Run.Verified || len(got.Run.Progress) < 5 {
		t.Errorf("flow_run = %+v, want verified with progress", got.Run)
	}
	if !got.Abort.Rejected {
		t.Errorf("aborted flow_run = %+v, want the call rejected by the abort", got.Abort)
	}
	if got.After.Status != "ok" || got.After.Busy {
		t.Errorf("flow_status after the abort = %+v, want ok and not busy", got.After)
	}
	if got.TaskRun.IsError || !got.TaskRun.Verified || got.TaskRun.TaskID == "" || got.TaskRun.Related != got.TaskRun.TaskID ||
		!slices.Contains(got.TaskRun.Events, "taskCreated:working") || !slices.Contains(got.TaskRun.Events, "taskStatus:completed") {
		t.Errorf("flow_run as a task = %+v, want created, completed, the verified report and its related task", got.TaskRun)
	}
	if got.TaskCancel.Reply != "cancelled" || got.TaskCancel.Final != "cancelled" || !strings.Contains(got.TaskCancel.Error, "cancelled") {
		t.Errorf("flow_check cancelled through tasks/cancel = %+v", got.TaskCancel)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "tasky.pid")); err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if syscall.Kill(pid, 0) == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the check cancelled through tasks/cancel is still running (pid %d)", pid)
		}
	} else {
		t.Errorf("the task's check never started: %v", err)
	}
	if got.Stderr != "" {
		t.Errorf("flow serve wrote to stderr: %q", got.Stderr)
	}
	// No process is left behind: the check's group, and flow serve itself.
	pidText, err := os.ReadFile(filepath.Join(ws, "slow.pid"))
	if err != nil {
		t.Fatalf("the aborted run's check never started: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	waitGone(t, "the aborted check's process group", func() bool { return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) })
	waitGone(t, "flow serve", func() bool { return !processRunning(cfg) })
}

// waitGone waits (bounded) until gone reports true.
func waitGone(t *testing.T, what string, gone func() bool) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if gone() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s is still running", what)
}

// processRunning reports whether a live process has arg on its command line.
func processRunning(arg string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if strings.Contains(string(cmdline), arg) && !strings.Contains(string(stat), ") Z ") {
			return true
		}
	}
	return false
}
