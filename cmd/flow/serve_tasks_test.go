package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// initTasks initializes as a client with the tasks capability.
func (p *mcpProc) initTasks() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"test","version":"1"}}}`)
	r, _ := p.recvID(0)
	caps := r["result"].(map[string]any)["capabilities"].(map[string]any)
	if caps["tasks"] == nil {
		p.t.Fatalf("flow serve does not declare the tasks capability: %v", caps)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// taskCall sends a task-augmented tools/call and returns the task.
func (p *mcpProc) taskCall(id float64, tool, args string) map[string]any {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tools/call","params":{"name":%q,"arguments":%s,"task":{"ttl":3600000}}}`, id, tool, args))
	r, _ := p.recvID(id)
	res, _ := r["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	if task["taskId"] == nil || task["status"] != "working" && task["status"] != "completed" {
		p.t.Fatalf("task-augmented %s = %v, want a task at once", tool, r)
	}
	return task
}

// taskReq sends tasks/<method> for id and returns the reply.
func (p *mcpProc) taskReq(id float64, method string, taskID any) map[string]any {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/%s","params":{"taskId":%q}}`, id, method, taskID))
	r, _ := p.recvID(id)
	return r
}

func withoutMeta(res map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range res {
		if k != "_meta" {
			out[k] = v
		}
	}
	return out
}

// TestServeTaskRun: a task-augmented flow_run is a handle at once, working
// then completed, and tasks/result is exactly the plain call's result (the
// same idempotency key names the plain call's run, so no second run).
func TestServeTaskRun(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: add A."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["sh", "-c", "test -e go-on || sleep 1; grep -q func a.go"]
kind = "lint"
filetypes = ["go"]
`)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initTasks()
	task := p.taskCall(1, "flow_run", `{"task":"add A","idempotency_key":"add-A-1"}`)
	id := task["taskId"].(string)
	if len(id) != 32 || task["pollInterval"] == nil || task["ttl"] != float64(3600000) {
		t.Fatalf("task = %v", task)
	}
	if g := p.taskReq(2, "get", id); g["result"].(map[string]any)["status"] != "working" {
		t.Fatalf("tasks/get during the run = %v, want working", g)
	}
	// A second flow_run while the task runs is busy.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"other"}}}`)
	if r, _ := p.recvID(3); r["result"].(map[string]any)["structuredContent"].(map[string]any)["status"] != "busy" {
		t.Fatalf("second flow_run = %v, want busy", r)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":%q}}`, id))
	r, notes := p.recvID(4)
	res := r["result"].(map[string]any)
	if res["isError"] != false || res["structuredContent"].(map[string]any)["verified"] != true {
		t.Fatalf("tasks/result = %v", res)
	}
	if rel := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
		t.Fatalf("tasks/result _meta = %v", res["_meta"])
	}
	statusSeen := false
	for _, n := range notes {
		statusSeen = statusSeen || n["method"] == "notifications/tasks/status"
	}
	if !statusSeen {
		t.Errorf("no notifications/tasks/status before the result: %v", notes)
	}
	if g := p.taskReq(5, "get", id); g["result"].(map[string]any)["status"] != "completed" {
		t.Fatalf("tasks/get after the run = %v, want completed", g)
	}
	// The plain call with the same key returns the same result, no new run.
	p.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A","idempotency_key":"add-A-1"}}}`)
	plain, _ := p.recvID(6)
	if got, want := mustJSON(plain["result"]), mustJSON(withoutMeta(res)); got != want {
		t.Fatalf("plain call = %s\nwant tasks/result without _meta = %s", got, want)
	}
	if n := len(srv.Chats()); n != 4 {
		t.Errorf("the model saw %d requests, want the 4 of one run", n)
	}
	if r := p.taskReq(7, "get", "0123456789abcdef0123456789abcdef"); errorCode(r) != -32602 {
		t.Errorf("tasks/get of an unknown id = %v, want -32602", r)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// slowCheckConfig is a workspace whose check records its pid and sleeps.
func slowCheckConfig(t *testing.T) (ws, cfg string) {
	ws = workspace(t)
	cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[checks.quick]
cmd = ["true"]
[checks.slow]
cmd = ["sh", "-c", "echo $$ > check.pid; exec sleep 300"]
`)
	return ws, cfg
}

// checkPID waits for the slow check's pid file.
func checkPID(t *testing.T, ws string) int {
	t.Helper()
	path := filepath.Join(ws, "check.pid")
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the slow check did not start")
	return 0
}

// TestServeTaskCancelKillsCheck: tasks/cancel mid-check ends cancelled and
// the check's process is gone.
func TestServeTaskCancelKillsCheck(t *testing.T) {
	t.Parallel()
	ws, cfg := slowCheckConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initTasks()
	id := p.taskCall(1, "flow_check", `{"name":"slow"}`)["taskId"]
	pid := checkPID(t, ws)
	r := p.taskReq(2, "cancel", id)
	if r["result"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("tasks/cancel = %v, want cancelled", r)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the check's process %d is still running after tasks/cancel", pid)
	}
	if r := p.taskReq(3, "cancel", id); errorCode(r) != -32602 {
		t.Errorf("cancelling a cancelled task = %v, want -32602", r)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeTasksOutliveTheServer: a server killed mid-call; the next one
// reports the plain call it was running failed ("interrupted"), the task it
// had started in a worker still working, and still returns the result of
// the task that completed before the kill.
func TestServeTasksOutliveTheServer(t *testing.T) {
	t.Parallel()
	ws, cfg := slowCheckConfig(t)
	killWorkers(t, cfg)
	environ := hermeticEnv(t)
	p := startServe(t, ws, environ, "--trusted", "-c", cfg)
	p.initTasks()
	done := p.taskCall(1, "flow_check", `{"name":"quick"}`)["taskId"]
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, done))
	first, _ := p.recvID(2)
	// A plain call runs in the server and ends with it.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"slow"}}}`)
	checkPID(t, ws)
	p.cmd.Process.Kill()
	waitExit(t, p.cmd)
	os.Remove(filepath.Join(ws, "check.pid"))

	q := startServe(t, ws, environ, "--trusted", "-c", cfg)
	q.initTasks()
	q.send(`{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`)
	r, _ := q.recvID(1)
	tasks := r["result"].(map[string]any)["tasks"].([]any)
	plain := tasks[0].(map[string]any)
	if len(tasks) != 2 || plain["status"] != "failed" || !strings.Contains(fmt.Sprint(plain["statusMessage"]), "interrupted: the flow server") {
		t.Fatalf("tasks/list after the kill = %v, want the plain call failed (interrupted) first", tasks)
	}
	again := q.taskReq(2, "result", done)
	if got, want := mustJSON(again["result"]), mustJSON(first["result"]); got != want {
		t.Fatalf("result from the new server = %s, want %s", got, want)
	}
	// A task runs in its worker, which the kill of its server leaves alone.
	slow := q.taskCall(3, "flow_check", `{"name":"slow"}`)["taskId"]
	checkPID(t, ws)
	q.cmd.Process.Kill()
	waitExit(t, q.cmd)
	u := startServe(t, ws, environ, "--trusted", "-c", cfg)
	u.initTasks()
	if g := u.taskReq(1, "get", slow)["result"].(map[string]any); g["status"] != "working" {
		t.Fatalf("the killed server's task = %v, want still working in its worker", g)
	}
	// The command line sees them too.
	res := runFlow(t, ws, environ, "tasks", "-c", cfg, "--json")
	var listed struct {
		Status  string
		Running *struct{ ID, Tool, Status string }
		Tasks   []struct{ ID, Tool, Status, Message string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil || res.code != 0 {
		t.Fatalf("flow tasks = %d %q %q", res.code, res.stdout, res.stderr)
	}
	if listed.Running == nil || listed.Running.ID != slow || len(listed.Tasks) != 3 ||
		listed.Tasks[1].Status != "failed" || listed.Tasks[2].ID != done || listed.Tasks[2].Status != "completed" {
		t.Errorf("flow tasks = %s, want the running task first and the two earlier ones", res.stdout)
	}
	st := runFlow(t, ws, environ, "status", "-c", cfg, "--json")
	var status struct {
		Status string
		Tasks  struct {
			Running *struct{ ID, Tool string }
			Recent  []struct{ ID string }
		}
	}
	if err := json.Unmarshal([]byte(st.stdout), &status); err != nil || status.Status != "ok" ||
		status.Tasks.Running == nil || status.Tasks.Running.ID != slow || len(status.Tasks.Recent) != 3 {
		t.Errorf("flow status = %s, want the running task and the last 3", st.stdout)
	}
	if g := u.taskReq(2, "cancel", slow)["result"].(map[string]any); g["status"] != "cancelled" {
		t.Errorf("tasks/cancel = %v", g)
	}
	if code := u.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, u.stderr)
	}
}

// TestServeEOFFinishesCheck: requests piped into flow serve get their real
// result at end of input, and the server exits 0.
func TestServeEOFFinishesCheck(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[checks.lint]
cmd = ["sh", "-c", "sleep 1; echo fine"]
[checks.gated]
cmd = ["sh", "-c", "while [ ! -e go-on ]; do sleep 0.05; done; echo through"]
required = false
`)
	environ := hermeticEnv(t)
	cmd := exec.Command(flowBin, "serve", "--trusted", "-c", cfg)
	cmd.Dir, cmd.Env = ws, environ
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"lint"}}}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flow serve: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var last map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &last) != nil {
		t.Fatalf("stdout = %q, want the initialize reply and the check's", out)
	}
	sc := last["result"].(map[string]any)["structuredContent"].(map[string]any)
	if sc["status"] != "ok" {
		t.Fatalf("piped flow_check = %v, want its real result", sc)
	}

	// A task-augmented call is answered at once and runs in a worker
	// process of its own: at end of input the server exits without waiting
	// for it, the task goes on (EOF is not a cancel), and its record says
	// so.
	cmd = exec.Command(flowBin, "serve", "--trusted", "-c", cfg)
	cmd.Dir, cmd.Env = ws, environ
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"gated"},"task":{}}}
`)
	if out, err = cmd.Output(); err != nil || strings.Count(string(out), "\n") != 2 || !strings.Contains(string(out), `"status":"working"`) {
		t.Fatalf("flow serve with a task: %v, stdout %q; want the initialize reply and the working task", err, out)
	}
	killWorkers(t, cfg)
	listed := waitTask(t, ws, environ, cfg, func(tk listedTask) bool { return tk.Tool == "flow_check" && tk.Status == "working" })
	if listed.PID == 0 || listed.PID == cmd.Process.Pid {
		t.Fatalf("the working task's process is %d (server %d), want its worker", listed.PID, cmd.Process.Pid)
	}
	writeFile(t, ws, "go-on", "")
	done := waitTask(t, ws, environ, cfg, func(tk listedTask) bool { return tk.ID == listed.ID && tk.Status != "working" })
	if done.Status != "completed" || done.Message != "ok" {
		t.Fatalf("the task after its server exited = %+v, want it completed by its worker", done)
	}
}

// listedTask is one task of `flow tasks --json`.
type listedTask struct {
	ID, Tool, Status, Message, RunID string
	PID                              int
}

// waitTask polls `flow tasks` (bounded) until a task matches, and returns it.
func waitTask(t *testing.T, ws string, environ []string, cfg string, match func(listedTask) bool) listedTask {
	t.Helper()
	var last string
	for i := 0; i < 300; i++ {
		res := runFlow(t, ws, environ, "tasks", "-c", cfg, "--json")
		var listed struct{ Tasks []listedTask }
		if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil {
			t.Fatalf("flow tasks = %d %q %q", res.code, res.stdout, res.stderr)
		}
		for _, tk := range listed.Tasks {
			if match(tk) {
				return tk
			}
		}
		last = res.stdout
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no task as wanted in flow tasks: %s", last)
	return listedTask{}
}

// killWorkers kills, at the end of the test, every task worker of the
// configuration cfg still running: a worker lives in a session of its own
// and outlives the server the test kills.
func killWorkers(t *testing.T, cfg string) {
	t.Cleanup(func() {
		for _, pid := range processesWith("task-worker", cfg) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// processesWith returns the live processes whose command line holds every
// one of args.
func processesWith(args ...string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		all := !strings.Contains(string(stat), ") Z ")
		for _, a := range args {
			all = all && strings.Contains(string(cmdline), a)
		}
		if all {
			pids = append(pids, pid)
		}
	}
	return pids
}

// slowRunConfig is a workspace whose first model turn takes delay.
func slowRunConfig(t *testing.T, delay time.Duration) (ws, cfg string, srv *ollamatest.Server) {
	ws = workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv = ollamatest.New(t,
		ollamatest.Turn{Delay: delay, Content: "Plan: add A."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["grep", "-q", "func", "a.go"]
kind = "lint"
filetypes = ["go"]
`)
	return ws, cfg, srv
}

func toolReport(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("no report in %v", r)
	}
	return sc
}

// TestServeWaitSecondsAndRunStatus: a flow_run whose wait_seconds runs out
// returns "running" with its run id; flow_status {run_id} shows progress,
// then the run's report.
func TestServeWaitSecondsAndRunStatus(t *testing.T) {
	t.Parallel()
	ws, cfg, _ := slowRunConfig(t, 4*time.Second)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A","wait_seconds":1}}}`)
	r, _ := p.recvID(1)
	rep := toolReport(t, r)
	runID, _ := rep["run_id"].(string)
	if rep["status"] != "running" || runID == "" || !strings.Contains(fmt.Sprint(rep["follow"]), runID) {
		t.Fatalf("flow_run past wait_seconds = %v, want running with the run id and how to follow it", rep)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_status","arguments":{"run_id":%q}}}`, runID))
	r, _ = p.recvID(2)
	if rep := toolReport(t, r); rep["status"] != "running" || rep["progress"] == "" {
		t.Fatalf("flow_status {run_id} during the run = %v, want running with progress", rep)
	}
	var final map[string]any
	for i := 0; i < 600; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_status","arguments":{"run_id":%q}}}`, 10+i, runID))
		r, _ := p.recvID(float64(10 + i))
		if final = toolReport(t, r); final["status"] != "running" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if final["status"] != "ok" || final["verified"] != true || final["run_id"] != runID {
		t.Fatalf("flow_status {run_id} after the run = %v, want its verified report", final)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeShortHostDefault: a plain flow_run from a host known to cut
// calls at 60 s comes back "running" before that, and the run goes on.
func TestServeShortHostDefault(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits 50 s")
	}
	ws, cfg, _ := slowRunConfig(t, 90*time.Second)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1"}}}`)
	p.recvID(0)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A"}}}`)
	r, _ := p.recvID(1)
	if rep := toolReport(t, r); rep["status"] != "running" || rep["run_id"] == "" {
		t.Fatalf("plain flow_run from claude-ai = %v, want running with a run id", rep)
	}
	p.cmd.Process.Kill()
	waitExit(t, p.cmd)
}

// TestServeHeartbeat: during one 25 s model turn, a call with a
// progressToken keeps getting progress notifications (at least one per
// 10 s of silence), each saying what it waits on.
func TestServeHeartbeat(t *testing.T) {
	t.Parallel()
	ws, cfg, _ := slowRunConfig(t, 25*time.Second)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A"},"_meta":{"progressToken":"hb"}}}`)
	r, notes := p.recvID(1)
	if rep := toolReport(t, r); rep["verified"] != true {
		t.Fatalf("flow_run = %v", rep)
	}
	beats, waits := 0, 0
	for _, n := range notes {
		msg, _ := n["params"].(map[string]any)["message"].(string)
		if strings.Contains(msg, "still working") {
			beats++
		}
		if strings.Contains(msg, "turn 1: waiting for the model, ") {
			waits++ // the runtime's own heartbeat event, as `flow run` prints it
		}
	}
	// The server's beat fills only silences of half its period, so how the
	// runtime's own wait events fall between its ticks decides whether it
	// beats once or twice; on a loaded machine it was once.
	if beats < 1 || waits < 2 {
		t.Errorf("%d server heartbeats and %d model-wait events during a 25 s model turn, want at least one heartbeat and two wait events (one per 10 s)", beats, waits)
	}
}

// TestServeTaskListPages: tasks/list pages through more tasks than one
// page holds, newest first, each once.
func TestServeTaskListPages(t *testing.T) {
	t.Parallel()
	ws, cfg := slowCheckConfig(t)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initTasks()
	var made []string
	for i := 0; i < 23; i++ {
		id := p.taskCall(float64(100+i), "flow_check", `{"name":"quick"}`)["taskId"].(string)
		p.taskReq(float64(200+i), "result", id)
		made = append(made, id)
	}
	var listed []string
	cursor, pages := "", 0
	for pages < 10 {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/list","params":%s}`, 300+pages, params))
		r, _ := p.recvID(float64(300 + pages))
		res := r["result"].(map[string]any)
		for _, tk := range res["tasks"].([]any) {
			listed = append(listed, tk.(map[string]any)["taskId"].(string))
		}
		pages++
		cursor, _ = res["nextCursor"].(string)
		if cursor == "" {
			break
		}
	}
	if pages != 2 || len(listed) != len(made) {
		t.Fatalf("tasks/list: %d pages, %d tasks; want 2 pages and %d tasks", pages, len(listed), len(made))
	}
	for i, id := range listed {
		if want := made[len(made)-1-i]; id != want {
			t.Fatalf("tasks/list item %d = %s, want %s (newest first)", i, id, want)
		}
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}
