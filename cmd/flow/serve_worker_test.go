package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// gatedRun is a workspace whose run, as an MCP task, stops at a check that
// waits for the file go-on: the planner plans, the coder writes func A
// into a.go and calls the gate check, then ends; the reviewer approves.
// The required lint check fails before the run and passes after, so the
// run verifies.
type gatedRun struct {
	ws, cfg string
	env     []string
	model   *ollamatest.Server
}

func newGatedRun(t *testing.T) *gatedRun {
	t.Helper()
	g := &gatedRun{ws: workspace(t), env: hermeticEnv(t)}
	writeFile(t, g.ws, "a.go", "package a\n")
	g.model = ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: add A, then run the gate check."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"}),
			call("c2", "flow_check", map[string]any{"name": "gate"}),
		}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	g.cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(g.ws)+`
[ollama]
base_url = `+tomlString(g.model.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["grep", "-q", "func", "a.go"]
kind = "lint"
filetypes = ["go"]
[checks.gate]
cmd = ["sh", "-c", "echo $$ > gate.pid; while [ ! -e go-on ]; do sleep 0.05; done"]
required = false
`)
	killWorkers(t, g.cfg)
	return g
}

// serve starts a flow serve of the workspace, initialized with tasks.
func (g *gatedRun) serve(t *testing.T) *mcpProc {
	p := startServe(t, g.ws, g.env, "--trusted", "-c", g.cfg)
	p.initTasks()
	return p
}

// start makes the run a task of p and waits until it stands at the gate.
func (g *gatedRun) start(t *testing.T, p *mcpProc) string {
	t.Helper()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A"},"task":{"ttl":3600000},"_meta":{"progressToken":"gated"}}}`)
	r, _ := p.recvID(1)
	task, _ := r["result"].(map[string]any)["task"].(map[string]any)
	if task["status"] != "working" {
		t.Fatalf("task-augmented flow_run = %v, want a working task", r)
	}
	g.gatePID(t)
	return task["taskId"].(string)
}

// gatePID waits for the gate check to start and returns its pid.
func (g *gatedRun) gatePID(t *testing.T) int {
	t.Helper()
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(filepath.Join(g.ws, "gate.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the gate check never started")
	return 0
}

// record reads the task's record through `flow tasks`.
func (g *gatedRun) record(t *testing.T, id string) listedTask {
	t.Helper()
	return waitTask(t, g.ws, g.env, g.cfg, func(tk listedTask) bool { return tk.ID == id })
}

// alive reports whether a process runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// TestServeTaskOutlivesServer: a task's run goes on in its worker however
// its server goes away — stdin closed (exit 0 at once), SIGTERM (130) or
// SIGKILL. The next flow serve shows it working with its latest progress
// (so do flow tasks and flow status), tasks/result waits for it and
// returns the result a plain call returns, and nothing is left holding
// the workspace.
func TestServeTaskOutlivesServer(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stdin closed", "SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			g := newGatedRun(t)
			p := g.serve(t)
			id := g.start(t, p)
			gone := time.Now()
			switch how {
			case "stdin closed":
				if code := p.exit(); code != 0 {
					t.Errorf("flow serve at end of input = %d, stderr %q", code, p.stderr)
				}
			case "SIGTERM":
				p.cmd.Process.Signal(syscall.SIGTERM)
				if code := waitExit(t, p.cmd); code != 130 {
					t.Errorf("flow serve after SIGTERM = %d, want 130", code)
				}
			case "SIGKILL":
				p.cmd.Process.Kill()
				waitExit(t, p.cmd)
			}
			if d := time.Since(gone); d > 5*time.Second {
				t.Errorf("flow serve took %s to go away with a task running", d)
			}
			rec := g.record(t, id)
			if rec.Status != "working" || rec.PID == 0 || rec.PID == p.cmd.Process.Pid || !alive(rec.PID) {
				t.Fatalf("the task after its server went (%s) = %+v, want working in a live worker", how, rec)
			}
			var st struct {
				Busy  bool
				Error string
				Tasks struct{ Running *struct{ ID, Message string } }
			}
			res := runFlow(t, g.ws, g.env, "status", "-c", g.cfg, "--json")
			if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || !st.Busy || st.Tasks.Running == nil || st.Tasks.Running.ID != id {
				t.Errorf("flow status = %s, want busy with the running task", res.stdout)
			}

			// The worker writes its latest event to the record at most
			// every 2 s, the last one of a burst included.
			q := g.serve(t)
			var got map[string]any
			for i := 0; i < 60; i++ {
				got = q.taskReq(float64(100+i), "get", id)["result"].(map[string]any)
				if got["status"] != "working" || strings.Contains(fmt.Sprint(got["statusMessage"]), "gate") {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if got["status"] != "working" || !strings.Contains(fmt.Sprint(got["statusMessage"]), "gate") {
				t.Fatalf("tasks/get from the next server = %v, want working at the gate check", got)
			}
			q.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":%q}}`, id))
			writeFile(t, g.ws, "go-on", "")
			r, _ := q.recvID(3)
			result := r["result"].(map[string]any)
			sc, _ := result["structuredContent"].(map[string]any)
			if result["isError"] != false || sc["status"] != "ok" || sc["verified"] != true {
				t.Fatalf("tasks/result = %v, want the verified run", result)
			}
			content := result["content"].([]any)
			if text := content[len(content)-1].(map[string]any)["text"]; mustJSON(sc) != mustJSONText(t, text) {
				t.Errorf("the result's text %v is not its structuredContent, as a plain call's is", text)
			}
			if rel := result["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
				t.Errorf("tasks/result _meta = %v", result["_meta"])
			}
			if g := q.taskReq(4, "get", id)["result"].(map[string]any); g["status"] != "completed" {
				t.Errorf("tasks/get after the run = %v, want completed", g)
			}
			waitGone(t, "the task's worker", func() bool { return !alive(rec.PID) })
			q.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"lint"}}}`)
			if r, _ := q.recvID(5); toolReport(t, r)["status"] != "ok" {
				t.Errorf("flow_check after the task = %v, want ok: the workspace is free", r)
			}
			if code := q.exit(); code != 0 {
				t.Errorf("exit %d, stderr %q", code, q.stderr)
			}
		})
	}
}

// mustJSONText re-encodes a JSON text the way mustJSON encodes a value.
func mustJSONText(t *testing.T, text any) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(fmt.Sprint(text)), &v); err != nil {
		t.Fatalf("result text is not JSON: %v", text)
	}
	return mustJSON(v)
}

// TestServeTaskWorkerKilled: a worker killed mid-task fails its task with
// the cause — told by the server that started it, or guessed by a later
// one — its check's process does not hold the workspace, and the lock is
// free for the next job.
func TestServeTaskWorkerKilled(t *testing.T) {
	t.Parallel()
	for _, serverAlive := range []bool{true, false} {
		t.Run(fmt.Sprintf("server alive %v", serverAlive), func(t *testing.T) {
			t.Parallel()
			g := newGatedRun(t)
			p := g.serve(t)
			id := g.start(t, p)
			defer syscall.Kill(g.gatePID(t), syscall.SIGKILL)
			worker := g.record(t, id).PID
			if !serverAlive {
				p.cmd.Process.Kill()
				waitExit(t, p.cmd)
				p = g.serve(t)
			}
			syscall.Kill(worker, syscall.SIGKILL)
			var got map[string]any
			for i := 0; i < 100; i++ {
				got = p.taskReq(float64(10+i), "get", id)["result"].(map[string]any)
				if got["status"] != "working" {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			msg := fmt.Sprint(got["statusMessage"])
			want := fmt.Sprintf("interrupted: the task's worker process %d was killed by signal SIGKILL before the task finished", worker)
			if !serverAlive {
				want = fmt.Sprintf("interrupted: the task's worker process %d ended (it was killed, crashed, or the machine restarted) before the task finished", worker)
			}
			if got["status"] != "failed" || !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "its edits are in the journal (flow undo reverts them)") {
				t.Fatalf("tasks/get after the worker was killed = %v, want failed: %q…", got, want)
			}
			// The task fails once the worker's main thread is a zombie; the
			// kernel drops the worker's lock when its last thread has exited,
			// which under load can come a little later. A lock still held
			// after 5 s is held by something else (its check's process).
			var r map[string]any
			for i := 0; i < 50; i++ {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"lint"}}}`, 200+i))
				if r, _ = p.recvID(float64(200 + i)); toolReport(t, r)["status"] != "busy" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if toolReport(t, r)["status"] == "busy" {
				t.Errorf("flow_check after the worker died = %v: something still holds the workspace", r)
			}
			if code := p.exit(); code != 0 {
				t.Errorf("exit %d, stderr %q", code, p.stderr)
			}
		})
	}
}

// TestServeTaskCancelReachesWorker: tasks/cancel from a server that did not
// start the task reaches its worker: the run stops, its check's process is
// killed, and the task is cancelled.
func TestServeTaskCancelReachesWorker(t *testing.T) {
	t.Parallel()
	g := newGatedRun(t)
	p := g.serve(t)
	id := g.start(t, p)
	gate := g.gatePID(t)
	worker := g.record(t, id).PID
	p.cmd.Process.Kill()
	waitExit(t, p.cmd)
	q := g.serve(t)
	got := q.taskReq(2, "cancel", id)["result"].(map[string]any)
	if got["status"] != "cancelled" || !strings.HasPrefix(fmt.Sprint(got["statusMessage"]), "cancelled: The run was cancelled") {
		t.Fatalf("tasks/cancel from the next server = %v, want cancelled by the run", got)
	}
	waitGone(t, "the gate check", func() bool { return !alive(gate) })
	waitGone(t, "the task's worker", func() bool { return !alive(worker) })
	r := q.taskReq(3, "result", id)["result"].(map[string]any)
	if sc := r["structuredContent"].(map[string]any); sc["status"] != "cancelled" {
		t.Errorf("tasks/result of the cancelled task = %v", r)
	}
	if code := q.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, q.stderr)
	}
}

// TestServeTaskProgressFromWorker: the server that started a task relays
// its worker's runtime events as notifications/progress with the call's
// token, and says when the task ends.
func TestServeTaskProgressFromWorker(t *testing.T) {
	t.Parallel()
	g := newGatedRun(t)
	p := g.serve(t)
	id := g.start(t, p)
	writeFile(t, g.ws, "go-on", "")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	r, notes := p.recvID(2)
	if sc := toolReport(t, r); sc["verified"] != true {
		t.Fatalf("tasks/result = %v", r)
	}
	progress, statusAt := 0, -1
	for i, n := range notes {
		params, _ := n["params"].(map[string]any)
		switch n["method"] {
		case "notifications/progress":
			if params["progressToken"] != "gated" {
				t.Errorf("progress for token %v", params["progressToken"])
			}
			progress++
		case "notifications/tasks/status":
			statusAt = i
			if params["status"] != "completed" || params["taskId"] != id {
				t.Errorf("notifications/tasks/status = %v", params)
			}
		}
	}
	// The events before the gate arrived before this test sent tasks/result.
	if progress < 3 || statusAt < 0 {
		t.Errorf("%d progress notifications and tasks/status at %d after the gate; want the run's events and the status", progress, statusAt)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}
