package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// newTaskStore opens a task store in a fresh state directory.
func newTaskStore(t *testing.T) *journal.Tasks {
	t.Helper()
	store, err := journal.Open(t.TempDir(), t.TempDir(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := store.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// startTaskServer starts a session of a server with a task store.
func startTaskServer(t *testing.T, rt Runtime, opts Options) (*client, *Server) {
	t.Helper()
	if opts.Tasks == nil {
		opts.Tasks = newTaskStore(t)
	}
	opts.Version = "test"
	srv := NewServer(rt, opts)
	return startSession(t, context.Background(), srv), srv
}

// handshakeAs initializes as client name with capabilities caps.
func (c *client) handshakeAs(name, caps string) map[string]any {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":%q,"version":"1"}}}`, caps, name))
	m := c.recvMsg()
	if m["result"] == nil {
		c.t.Fatalf("initialize failed: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m["result"].(map[string]any)
}

// recvID reads lines until the reply with id, returning it and the
// notifications seen before it.
func (c *client) recvID(id string) (map[string]any, []map[string]any) {
	c.t.Helper()
	var notes []map[string]any
	for {
		m := c.recvMsg()
		if m["method"] != nil {
			notes = append(notes, m)
			continue
		}
		if b, _ := json.Marshal(m["id"]); string(b) == id {
			return m, notes
		}
		c.t.Fatalf("unexpected reply %v while waiting for id %s", m, id)
	}
}

func structured(t *testing.T, reply map[string]any) map[string]any {
	t.Helper()
	res, ok := reply["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", reply)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

func TestTasksCapabilityAndTaskSupport(t *testing.T) {
	c, _ := startTaskServer(t, &fakeRuntime{}, Options{})
	res := c.handshakeAs("test", `{}`)
	caps := res["capabilities"].(map[string]any)
	want := map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	if diff := jsonDiff(asJSON(want), asJSON(caps["tasks"])); diff != "" {
		t.Fatalf("tasks capability (-want +got):\n%s", diff)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m, _ := c.recvID("1")
	support := map[string]any{}
	for _, tool := range m["result"].(map[string]any)["tools"].([]any) {
		tl := tool.(map[string]any)
		ex, _ := tl["execution"].(map[string]any)
		support[tl["name"].(string)] = ex["taskSupport"]
	}
	if support["flow_run"] != "optional" || support["flow_check"] != "optional" || support["flow_status"] != nil {
		t.Fatalf("taskSupport = %v; want optional, optional and absent for flow_status", support)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_status","arguments":{},"task":{}}}`)
	if m, _ := c.recvID("2"); errorCode(m) != codeMethodNotFound {
		t.Fatalf("flow_status as a task = %v, want -32601", m)
	}
}

// TestNoTasksBeforeTheirVersion: tasks came with 2025-11-25. A session
// that negotiated 2025-06-18 or 2025-03-26 is not told of them (no tasks
// capability, no execution member), may not send the task parameter and
// has no tasks/* methods; wait_seconds and idempotency_key, which are
// arguments, still work.
func TestNoTasksBeforeTheirVersion(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			c, _ := startTaskServer(t, &fakeRuntime{}, Options{})
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"tasks":{}},"clientInfo":{"name":"old","version":"1"}}}`, version))
			m, _ := c.recvID("0")
			res := m["result"].(map[string]any)
			if res["protocolVersion"] != version || res["capabilities"].(map[string]any)["tasks"] != nil {
				t.Fatalf("initialize for %s = %v, want that version without a tasks capability", version, res)
			}
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			m, _ = c.recvID("1")
			for _, tool := range m["result"].(map[string]any)["tools"].([]any) {
				if ex := tool.(map[string]any)["execution"]; ex != nil {
					t.Errorf("%v has execution %v in a %s session", tool.(map[string]any)["name"], ex, version)
				}
			}
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_check","arguments":{},"task":{}}}`)
			if m, _ := c.recvID("2"); errorCode(m) != codeInvalidParams || !strings.Contains(fmt.Sprint(m["error"]), `"task"`) {
				t.Errorf("a task-augmented call in a %s session = %v, want -32602 naming task", version, m)
			}
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`)
			if m, _ := c.recvID("3"); errorCode(m) != codeMethodNotFound {
				t.Errorf("tasks/list in a %s session = %v, want -32601", version, m)
			}
			c.send(callLine(4, "flow_run", map[string]any{"task": "t", "idempotency_key": "k"}, nil))
			if m, _ := c.recvID("4"); structured(t, m)["status"] != "ok" {
				t.Errorf("flow_run with an idempotency key in a %s session = %v", version, m)
			}
		})
	}
}

// TestInvalidTaskArguments: a task-augmented call whose arguments do not
// match the schema still gets a task, already failed, and tasks/result
// hands over the isError result naming the argument; nothing ran.
func TestInvalidTaskArguments(t *testing.T) {
	rt := &fakeRuntime{}
	c, _ := startTaskServer(t, rt, Options{})
	c.handshakeAs("test", `{"tasks":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":7},"task":{"ttl":60000}}}`)
	m, _ := c.recvID("1")
	task, _ := m["result"].(map[string]any)["task"].(map[string]any)
	if task["status"] != "failed" || !strings.Contains(fmt.Sprint(task["statusMessage"]), `argument "task" must be a string`) {
		t.Fatalf("task-augmented call with a number for task = %v, want a failed task saying why", m)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, task["taskId"]))
	m, _ = c.recvID("2")
	res := m["result"].(map[string]any)
	if sc := res["structuredContent"].(map[string]any); res["isError"] != true || sc["status"] != "error" || !strings.Contains(fmt.Sprint(sc["reason"]), `expected {"task": string`) {
		t.Fatalf("tasks/result = %v, want the isError result", res)
	}
	if runs, checks := rt.calls(); len(runs)+len(checks) > 0 {
		t.Errorf("the runtime ran %v %v", runs, checks)
	}
}

func TestTaskLifecycleInProcess(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c, _ := startTaskServer(t, rt, Options{})
	c.handshakeAs("test", `{"tasks":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"t1"},"task":{"ttl":60000}}}`)
	m, _ := c.recvID("1")
	task := m["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if len(id) != 32 || task["status"] != "working" || task["ttl"] != float64(60000) || task["pollInterval"] == nil || task["createdAt"] == nil || task["lastUpdatedAt"] == nil {
		t.Fatalf("create task result = %v", task)
	}
	// A second run while the task runs is busy.
	c.send(callLine(2, "flow_run", map[string]any{"task": "t2"}, nil))
	if m, _ := c.recvID("2"); structured(t, m)["status"] != "busy" {
		t.Fatalf("second flow_run = %v, want busy", m)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":%q}}`, id))
	m, _ = c.recvID("3")
	got := m["result"].(map[string]any)
	if got["status"] != "working" || got["statusMessage"] != "started t1" {
		t.Fatalf("tasks/get while working = %v, want working with the latest event", got)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":%q}}`, id))
	close(b.release)
	m, notes := c.recvID("4")
	res := m["result"].(map[string]any)
	meta, _ := res["_meta"].(map[string]any)
	if rel, _ := meta[relatedTaskKey].(map[string]any); rel["taskId"] != id {
		t.Fatalf("tasks/result _meta = %v, want the related task", res["_meta"])
	}
	if sc, _ := res["structuredContent"].(map[string]any); sc["status"] != "ok" || res["isError"] != false {
		t.Fatalf("tasks/result = %v", res)
	}
	sawStatus := false
	for _, n := range notes {
		if n["method"] == "notifications/tasks/status" && n["params"].(map[string]any)["status"] == "completed" {
			sawStatus = true
		}
	}
	if !sawStatus {
		t.Fatalf("no notifications/tasks/status completed before the result: %v", notes)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"0123456789abcdef0123456789abcdef"}}`)
	if m, _ := c.recvID("5"); errorCode(m) != codeInvalidParams {
		t.Fatalf("unknown task = %v, want -32602", m)
	}
}

func TestTaskCancelAndList(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c, _ := startTaskServer(t, rt, Options{TaskPageSize: 2})
	c.handshakeAs("test", `{}`)
	for i := range 3 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_check","arguments":{},"task":{}}}`, 10+i))
		m, _ := c.recvID(fmt.Sprint(10 + i))
		id := m["result"].(map[string]any)["task"].(map[string]any)["taskId"]
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, 20+i, id))
		c.recvID(fmt.Sprint(20 + i))
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"long"},"task":{}}}`)
	m, _ := c.recvID("1")
	id := m["result"].(map[string]any)["task"].(map[string]any)["taskId"].(string)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":%q}}`, id))
	m, _ = c.recvID("2")
	if got := m["result"].(map[string]any); got["status"] != "cancelled" || !b.ctxDone {
		t.Fatalf("tasks/cancel = %v (run saw cancel: %v)", got, b.ctxDone)
	} else if got["statusMessage"] != "cancelled: The run was cancelled" {
		// The report's status and its error, once each.
		t.Errorf("cancelled task's message = %q, want the report's status and error, once each", got["statusMessage"])
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":%q}}`, id))
	if m, _ := c.recvID("3"); errorCode(m) != codeInvalidParams {
		t.Fatalf("cancel of a cancelled task = %v, want -32602", m)
	}
	var ids []string
	cursor := ""
	for page := 0; page < 5; page++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"l%d","method":"tasks/list","params":%s}`, page, params))
		m, _ := c.recvID(fmt.Sprintf(`"l%d"`, page))
		res := m["result"].(map[string]any)
		for _, tk := range res["tasks"].([]any) {
			ids = append(ids, tk.(map[string]any)["taskId"].(string))
		}
		cursor, _ = res["nextCursor"].(string)
		if cursor == "" {
			break
		}
	}
	if len(ids) != 4 || ids[0] != id {
		t.Fatalf("tasks/list over pages = %v, want 4 tasks, newest (%s) first", ids, id)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{"cursor":"nope"}}`)
	if m, _ := c.recvID("4"); errorCode(m) != codeInvalidParams {
		t.Fatalf("bad cursor = %v, want -32602", m)
	}
}

func TestWaitSecondsAndRunStatus(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c, _ := startTaskServer(t, rt, Options{})
	c.handshakeAs("test", `{}`)
	c.send(callLine(1, "flow_run", map[string]any{"task": "slow", "wait_seconds": 1}, nil))
	m, _ := c.recvID("1")
	sc := structured(t, m)
	runID, _ := sc["run_id"].(string)
	if sc["status"] != "running" || runID == "" || m["result"].(map[string]any)["isError"] != false {
		t.Fatalf("flow_run past wait_seconds = %v, want running with a run id", m)
	}
	c.send(callLine(2, "flow_status", map[string]any{"run_id": runID}, nil))
	m, _ = c.recvID("2")
	if sc := structured(t, m); sc["status"] != "running" || sc["progress"] != "started slow" {
		t.Fatalf("flow_status {run_id} while running = %v", sc)
	}
	close(b.release)
	<-b.returned
	waitFor(t, "the run's record", func() bool {
		c.send(callLine(3, "flow_status", map[string]any{"run_id": runID}, nil))
		m, _ := c.recvID("3")
		return structured(t, m)["status"] == "ok"
	})
	c.send(callLine(4, "flow_status", map[string]any{"run_id": "nope"}, nil))
	if m, _ := c.recvID("4"); structured(t, m)["status"] != "error" {
		t.Fatalf("flow_status for an unknown run = %v", m)
	}
	c.send(callLine(5, "flow_run", map[string]any{"task": "x", "wait_seconds": "ten"}, nil))
	if m, _ := c.recvID("5"); structured(t, m)["status"] != "error" || !strings.Contains(fmt.Sprint(structured(t, m)["reason"]), `"wait_seconds" must be an integer`) {
		t.Fatalf("wait_seconds as a string = %v, want an isError result naming wait_seconds", m)
	}
}

func TestShortHostDefaultWait(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c, _ := startTaskServer(t, rt, Options{ShortHostWait: time.Second})
	c.handshakeAs("claude-ai", `{}`)
	c.send(callLine(1, "flow_run", map[string]any{"task": "slow"}, nil))
	m, _ := c.recvID("1")
	if sc := structured(t, m); sc["status"] != "running" {
		t.Fatalf("plain flow_run from a 60 s host = %v, want running", sc)
	}
	close(b.release)
	if NewServer(rt, Options{Tasks: newTaskStore(t)}).defaultWait("Claude-AI") != 50*time.Second {
		t.Fatal("the default wait of a 60 s host is not 50 s")
	}
	if NewServer(rt, Options{Tasks: newTaskStore(t)}).defaultWait("rose") != 0 {
		t.Fatal("another client does not wait until the end")
	}
}

func TestIdempotencyKey(t *testing.T) {
	rt := &fakeRuntime{run: func(_ context.Context, task string, _ func(string)) report.Run {
		return report.Run{Status: report.StatusOK, Verified: true, Task: task, RunID: "r"}
	}}
	c, _ := startTaskServer(t, rt, Options{})
	c.handshakeAs("test", `{}`)
	args := map[string]any{"task": "once", "idempotency_key": "k-1"}
	c.send(callLine(1, "flow_run", args, nil))
	first, _ := c.recvID("1")
	c.send(callLine(2, "flow_run", args, nil))
	second, _ := c.recvID("2")
	if diff := jsonDiff(asJSON(first["result"]), asJSON(second["result"])); diff != "" {
		t.Fatalf("second submission differs (-first +second):\n%s", diff)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"once","idempotency_key":"k-1"},"task":{}}}`)
	m, _ := c.recvID("3")
	if tk := m["result"].(map[string]any)["task"].(map[string]any); tk["status"] != "completed" {
		t.Fatalf("task-augmented resubmission = %v, want the completed task", tk)
	}
	// wait_seconds says how long to wait, not what to do: still a repeat.
	c.send(callLine(4, "flow_run", map[string]any{"task": "once", "idempotency_key": "k-1", "wait_seconds": 5}, nil))
	if m, _ := c.recvID("4"); jsonDiff(asJSON(first["result"]), asJSON(m["result"])) != "" {
		t.Fatalf("repeat with wait_seconds = %v, want the first result", m)
	}
	// The key with another task is refused, naming the first submission.
	c.send(callLine(5, "flow_run", map[string]any{"task": "twice", "idempotency_key": "k-1"}, nil))
	m, _ = c.recvID("5")
	sc := structured(t, m)
	if m["result"].(map[string]any)["isError"] != true || sc["status"] != "error" ||
		!strings.Contains(fmt.Sprint(sc["reason"]), `idempotency_key "k-1" was already used for another submission (flow_run {"task":"once"}`) {
		t.Fatalf("key reused with another task = %v, want an error naming the first submission", m)
	}
	// As a task, the refusal is a failed task holding the same error.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"twice","idempotency_key":"k-1"},"task":{}}}`)
	m, _ = c.recvID("7")
	if tk := m["result"].(map[string]any)["task"].(map[string]any); tk["status"] != "failed" || !strings.Contains(fmt.Sprint(tk["statusMessage"]), "already used") {
		t.Fatalf("task-augmented reuse of a key = %v, want a failed task", tk)
	}
	if runs, _ := rt.calls(); len(runs) != 1 {
		t.Fatalf("runtime saw %d runs for one key, want 1", len(runs))
	}
	// A task refused as busy holds no key: retried with it, it runs.
	release := make(chan struct{})
	rt.mu.Lock()
	rt.check = func(context.Context, string) report.CheckReport {
		<-release
		return report.CheckReport{Status: report.StatusOK, Verified: true, Checks: []report.CheckResult{}, Reason: "all required checks passed"}
	}
	rt.mu.Unlock()
	c.send(callLine(8, "flow_check", map[string]any{}, nil))
	waitFor(t, "the holder check", func() bool { _, checks := rt.calls(); return len(checks) == 1 })
	busy := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"later","idempotency_key":"k-2"},"task":{}}}`
	c.send(fmt.Sprintf(busy, 9))
	m, _ = c.recvID("9")
	refused := m["result"].(map[string]any)["task"].(map[string]any)
	if refused["status"] != "failed" || !strings.HasPrefix(fmt.Sprint(refused["statusMessage"]), "busy") {
		t.Fatalf("task-augmented call while a check runs = %v, want a failed busy task", refused)
	}
	close(release)
	c.recvID("8")
	c.send(fmt.Sprintf(busy, 10))
	m, _ = c.recvID("10")
	if tk := m["result"].(map[string]any)["task"].(map[string]any); tk["taskId"] == refused["taskId"] || tk["status"] == "failed" {
		t.Fatalf("the busy submission retried with its key = %v, want a new task", tk)
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHeartbeat: a job silent for several heartbeat periods (a long model
// call) still sends progress, saying what it waits on; without a token it
// sends nothing.
func TestHeartbeat(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c, _ := startTaskServer(t, rt, Options{Heartbeat: 200 * time.Millisecond})
	c.handshakeAs("test", `{}`)
	c.send(callLine(1, "flow_run", map[string]any{"task": "slow"}, "hb"))
	var beats int
	for beats < 3 {
		m := c.recvMsg()
		p, _ := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || p["progressToken"] != "hb" {
			t.Fatalf("unexpected message %v", m)
		}
		if msg, _ := p["message"].(string); msg != "started slow" {
			if !strings.HasPrefix(msg, "started slow — still working, ") {
				t.Fatalf("heartbeat message %q does not name the latest step", msg)
			}
			beats++
		}
	}
	close(b.release)
	if m, _ := c.recvID("1"); structured(t, m)["status"] != "ok" {
		t.Fatalf("flow_run = %v", m)
	}
}

// TestJobStartsAfterItsRecord: a plain call's job and a task's job start
// only once their record is written, so a server killed at any point of
// the job leaves a record the next one reports (doc/design.md §10.10); a
// plain call refused as busy is answered and leaves no record. The job
// looks at the record files itself, past the store's lock, and the calls
// carry an idempotency key, whose search of 100 earlier records keeps a
// record that is written after the job starts from winning the race.
func TestJobStartsAfterItsRecord(t *testing.T) {
	state := t.TempDir()
	js, err := journal.Open(state, t.TempDir(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := js.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		old, _, err := store.NewTask("flow_check", json.RawMessage(`{}`), 0, "")
		if err == nil {
			_, err = store.Update(old.ID, func(t *journal.Task) { t.Status = journal.TaskCompleted })
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// working lists the record files of working tasks as the job sees them.
	working := func() (ids []string) {
		files, _ := filepath.Glob(filepath.Join(state, "workspaces", "*", "tasks", "*.json"))
		for _, f := range files {
			var task journal.Task
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &task) == nil && task.Status == journal.TaskWorking {
				ids = append(ids, task.ID)
			}
		}
		return ids
	}
	seen := make(chan []string, 1)
	rt := &fakeRuntime{run: func(_ context.Context, task string, _ func(string)) report.Run {
		seen <- working()
		return report.Run{Status: report.StatusOK, Verified: true, Task: task}
	}}
	c, _ := startTaskServer(t, rt, Options{Tasks: store})
	c.handshakeAs("test", `{}`)
	for i, call := range []string{"plain call", "task"} {
		line := callLine(i, "flow_run", map[string]any{"task": "t", "idempotency_key": call}, nil)
		if call == "task" {
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"t","idempotency_key":%q},"task":{}}}`, i, call)
		}
		c.send(line)
		ids := <-seen
		c.recvID(fmt.Sprint(i))
		if len(ids) != 1 {
			t.Errorf("working records when the %s's job started = %v, want its own", call, ids)
		}
	}
	// A plain call refused as busy is only answered.
	b := newBlockingRun()
	rt.mu.Lock()
	rt.run = b.run
	rt.mu.Unlock()
	c.send(callLine("run", "flow_run", map[string]any{"task": "holder"}, nil))
	waitFor(t, "the holder run", func() bool { runs, _ := rt.calls(); return len(runs) == 3 })
	c.send(callLine("busy", "flow_check", map[string]any{}, nil))
	if m, _ := c.recvID(`"busy"`); structured(t, m)["status"] != "busy" {
		t.Fatalf("flow_check during a run = %v, want busy", m)
	}
	close(b.release)
	c.recvID(`"run"`)
	tasks, _, err := store.List("", 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 103 || tasks[0].Tool != "flow_run" {
		t.Errorf("%d records after the busy call, the newest %+v; want 103, the run newest, not the busy call", len(tasks), tasks[0])
	}
}

// TestRecordKeyTakenMeanwhile: when another process recorded a submission
// with the key after the session looked, the server's record is that
// task, errResubmitted says so, and this process does not watch it (its
// job would otherwise end the other process's task).
func TestRecordKeyTakenMeanwhile(t *testing.T) {
	_, srv := startTaskServer(t, &fakeRuntime{}, Options{})
	first, _, err := srv.tasks.NewTask("flow_run", json.RawMessage(`{"task":"t","idempotency_key":"k"}`), 0, "k")
	if err != nil {
		t.Fatal(err)
	}
	lt := &liveTask{tool: "flow_run", progress: func(string) {}}
	task, err := srv.record(lt, "flow_run", json.RawMessage(`{"task":"t","idempotency_key":"k"}`), 0, "k", "")
	if !errors.Is(err, errResubmitted) || task.ID != first.ID {
		t.Fatalf("record = %s, %v; want %s and errResubmitted", task.ID, err, first.ID)
	}
	if lt.id != "" || srv.liveTask(first.ID) != nil {
		t.Errorf("this process watches the other process's task %s", first.ID)
	}
}

// TestCancelBeforeTheJobStarts: a tasks/cancel that reaches a task
// between its record and its job stops the job as soon as it starts, and
// one after stops it at once.
func TestCancelBeforeTheJobStarts(t *testing.T) {
	stopped := 0
	early := &liveTask{}
	early.stop()
	early.started(func() { stopped++ })
	if stopped != 1 || !early.cancelled.Load() {
		t.Fatalf("a cancel before the start stopped the job %d times, want once", stopped)
	}
	late := &liveTask{}
	late.started(func() { stopped++ })
	if stopped != 1 {
		t.Fatal("a job was stopped with no cancel")
	}
	late.stop()
	if stopped != 2 {
		t.Fatalf("a cancel after the start did not stop the job")
	}
}
