package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// runWorker runs RunWorker in process on req and returns the event lines
// it wrote (through a pipe, as in a worker) and the task store.
func runWorker(t *testing.T, rt Runtime, req workerRequest, sigs chan os.Signal, during func(tasks *journal.Tasks, first workerEvent)) []workerEvent {
	t.Helper()
	return runWorkerOn(t, newTaskStore(t), rt, req, sigs, during)
}

// runWorkerOn is runWorker with a given task store.
func runWorkerOn(t *testing.T, tasks *journal.Tasks, rt Runtime, req workerRequest, sigs chan os.Signal, during func(tasks *journal.Tasks, first workerEvent)) []workerEvent {
	t.Helper()
	if req.TaskID == "" {
		req.TaskID, _ = journal.NewTaskID()
	}
	body, _ := json.Marshal(req)
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- RunWorker(rt, Options{Tasks: tasks, Version: "test"}, WorkerIO{Request: strings.NewReader(string(body)), Events: w, Signals: sigs})
		w.Close()
	}()
	var events []workerEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var ev workerEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
		if len(events) == 1 && during != nil {
			during(tasks, ev)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("RunWorker: %v", err)
	}
	for _, ev := range events {
		if ev.Task != nil {
			final, err := tasks.Task(ev.Task.ID)
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, workerEvent{Task: &final})
			break
		}
	}
	return events
}

// TestWorkerHandshakeFirst: the worker's first line is the task it
// recorded as its own, even though the job's events start before that
// line is sent; then come the events, and the record ends with exactly
// the tool result a plain call returns.
func TestWorkerHandshakeFirst(t *testing.T) {
	rt := &fakeRuntime{run: func(_ context.Context, task string, progress func(string)) report.Run {
		for _, m := range []string{"one", "two", "three"} {
			progress(m)
		}
		return report.Run{Status: report.StatusOK, Verified: true, Task: task, RunID: "run-1"}
	}}
	events := runWorker(t, rt, workerRequest{Tool: "flow_run", Arguments: json.RawMessage(`{"task":"t"}`), IdempotencyKey: "k"}, nil, nil)
	first, final := events[0], events[len(events)-1].Task
	if first.Task == nil || !first.Task.Worker || first.Task.Owner.PID != os.Getpid() || first.Task.IdempotencyKey != "k" {
		t.Fatalf("first event = %+v, want the task, owned by this worker", first)
	}
	var msgs []string
	for _, ev := range events[1 : len(events)-1] {
		msgs = append(msgs, ev.Message)
	}
	if got := strings.Join(msgs, ","); !strings.Contains(got, "one,two,three") {
		t.Errorf("events after the handshake = %q", got)
	}
	want, _ := reportResult(report.Run{Status: report.StatusOK, Verified: true, Task: "t", RunID: "run-1"}, report.StatusOK)
	raw, _ := toolResultJSON(want)
	if final.Status != journal.TaskCompleted || string(final.Result) != string(raw) {
		t.Fatalf("final record = %s %s, want completed with %s", final.Status, final.Result, raw)
	}
}

// TestWorkerSignals: the cancel signal ends the task cancelled, any other
// signal interrupts it (failed, naming the signal).
func TestWorkerSignals(t *testing.T) {
	for _, tc := range []struct {
		sig     os.Signal
		status  string
		message string
	}{
		{journal.CancelSignal, journal.TaskCancelled, "cancelled: The run was cancelled"},
		{syscall.SIGTERM, journal.TaskFailed, "was stopped by SIGTERM before the task finished"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			b := newBlockingRun()
			sigs := make(chan os.Signal, 1)
			events := runWorker(t, &fakeRuntime{run: b.run}, workerRequest{Tool: "flow_run", Arguments: json.RawMessage(`{"task":"t"}`)}, sigs,
				func(*journal.Tasks, workerEvent) { sigs <- tc.sig })
			final := events[len(events)-1].Task
			if final.Status != tc.status || !strings.Contains(final.Message, tc.message) {
				t.Fatalf("after %v the task is %s %q, want %s %q", tc.sig, final.Status, final.Message, tc.status, tc.message)
			}
		})
	}
}

// TestWorkerRefusals: invalid arguments and a busy workspace are tasks
// that failed with the isError result, handed over at once.
func TestWorkerRefusals(t *testing.T) {
	events := runWorker(t, &fakeRuntime{}, workerRequest{Tool: "flow_check", Arguments: json.RawMessage(`{"name":7}`)}, nil, nil)
	if tk := events[0].Task; tk == nil || tk.Status != journal.TaskFailed || !strings.Contains(tk.Message, `argument "name" must be a string`) {
		t.Fatalf("invalid arguments: %+v", events[0])
	}
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	j, err := rt.StartRun(context.Background(), "holder", func(string, string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { close(b.release); j.Result() }()
	events = runWorker(t, rt, workerRequest{Tool: "flow_check", Arguments: json.RawMessage(`{}`)}, nil, nil)
	if tk := events[0].Task; tk == nil || tk.Status != journal.TaskFailed || !strings.HasPrefix(tk.Message, "busy: a run is already in progress") {
		t.Fatalf("busy: %+v", events[0])
	}
}

// TestWorkerKeyTakenMeanwhile: when another process recorded a submission
// with the worker's idempotency key after the server looked, the worker
// hands over that task and runs nothing.
func TestWorkerKeyTakenMeanwhile(t *testing.T) {
	tasks := newTaskStore(t)
	first, _, err := tasks.NewTask("flow_run", json.RawMessage(`{"task":"t","idempotency_key":"k"}`), 0, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The job ends only when cancelled: a worker that let it run would
	// never return.
	rt := &fakeRuntime{run: func(ctx context.Context, task string, _ func(string)) report.Run {
		<-ctx.Done()
		return report.Run{Status: report.StatusCancelled, Task: task}
	}}
	events := runWorkerOn(t, tasks, rt, workerRequest{Tool: "flow_run", Arguments: json.RawMessage(`{"task":"t","idempotency_key":"k"}`), IdempotencyKey: "k"}, nil, nil)
	if tk := events[0].Task; tk == nil || tk.ID != first.ID {
		t.Fatalf("handshake = %+v, want the task %s recorded first", events[0], first.ID)
	}
	if got, _ := tasks.Task(first.ID); got.Status != journal.TaskWorking {
		t.Errorf("the first task was changed: %+v", got)
	}
	if runs, checks := rt.calls(); len(runs)+len(checks) > 0 {
		t.Errorf("the worker started the job (%v %v) for a key another task holds", runs, checks)
	}
}
