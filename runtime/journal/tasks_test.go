package journal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func newTasks(t *testing.T) (*Store, *Tasks) {
	t.Helper()
	f := newFixture(t, Options{})
	tasks, err := f.store.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	return f.store, tasks
}

func TestTaskLifecycle(t *testing.T) {
	_, tasks := newTasks(t)
	task, created, err := tasks.NewTask("flow_run", json.RawMessage(`{"task":"fix it"}`), time.Hour, "")
	if err != nil || !created {
		t.Fatalf("NewTask: %v, created %v", err, created)
	}
	if !taskIDPattern.MatchString(task.ID) || task.Status != TaskWorking || task.Version != 1 || task.TTL != time.Hour {
		t.Fatalf("new task: %+v", task)
	}
	got, err := tasks.Update(task.ID, func(t *Task) { t.Message = "coder turn 2"; t.RunID = "r1" })
	if err != nil || got.Version != 2 || got.Message != "coder turn 2" || got.Status != TaskWorking {
		t.Fatalf("Update: %+v, %v", got, err)
	}
	result := json.RawMessage(`{"isError":false}`)
	if _, err := tasks.Update(task.ID, func(t *Task) { t.Status = TaskCompleted; t.Result = result }); err != nil {
		t.Fatal(err)
	}
	after, err := tasks.Update(task.ID, func(t *Task) { t.Status = TaskCancelled })
	if err != nil || after.Status != TaskCompleted || after.Version != 3 {
		t.Fatalf("a terminal task changed: %+v, %v", after, err)
	}
	got, err = tasks.Task(task.ID)
	if err != nil || got.Status != TaskCompleted || string(got.Result) != string(result) || got.RunID != "r1" {
		t.Fatalf("Task: %+v, %v", got, err)
	}
	for _, id := range []string{"", "nope", strings.Repeat("0", 32), "../../etc/passwd"} {
		if _, err := tasks.Task(id); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("Task(%q): %v, want ErrTaskNotFound", id, err)
		}
	}
}

// TestTaskDiscard: only a working task of this process can be discarded;
// a finished one, or one another process owns, stays.
func TestTaskDiscard(t *testing.T) {
	_, tasks := newTasks(t)
	task, _, _ := tasks.NewTask("flow_check", nil, 0, "")
	if err := tasks.Discard(task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Task(task.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("a discarded task: %v, want ErrTaskNotFound", err)
	}
	done, _, _ := tasks.NewTask("flow_check", nil, 0, "")
	tasks.Update(done.ID, func(t *Task) { t.Status = TaskCompleted })
	other := &Tasks{dir: tasks.dir, self: Owner{PID: 1}, now: time.Now, changed: make(chan struct{})}
	theirs, _, _ := other.NewTask("flow_run", nil, 0, "")
	for _, id := range []string{done.ID, theirs.ID} {
		if err := tasks.Discard(id); err == nil {
			t.Errorf("Discard(%s) = nil, want a refusal", id)
		}
		if _, err := tasks.read(id); err != nil {
			t.Errorf("Discard(%s) removed it: %v", id, err)
		}
	}
}

// TestTaskPruneKeepsMaxFinished: past MaxTasks finished records the
// oldest finished go as a new one is recorded; working ones stay, and a
// record written and then discarded evicts nothing.
func TestTaskPruneKeepsMaxFinished(t *testing.T) {
	_, tasks := newTasks(t)
	clock := time.Now()
	tasks.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	oldest, _, _ := tasks.NewTask("flow_run", nil, 0, "") // working throughout
	var done []string
	for range MaxTasks + 3 {
		task, _, err := tasks.NewTask("flow_check", nil, 0, "")
		if err == nil {
			_, err = tasks.Update(task.ID, func(t *Task) { t.Status = TaskCompleted })
		}
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, task.ID)
	}
	for range 5 {
		refused, _, _ := tasks.NewTask("flow_check", nil, 0, "")
		if err := tasks.Discard(refused.ID); err != nil {
			t.Fatal(err)
		}
	}
	all, _, err := tasks.List("", 2*MaxTasks)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, task := range all {
		ids[task.ID] = true
	}
	if len(all) != MaxTasks+1 || !ids[oldest.ID] || ids[done[0]] || ids[done[2]] || !ids[done[3]] || !ids[done[len(done)-1]] {
		t.Errorf("kept %d records (working kept: %v; oldest finished gone: %v; newest kept: %v), want the working one and the newest %d finished",
			len(all), ids[oldest.ID], !ids[done[0]], ids[done[len(done)-1]], MaxTasks)
	}
}

func TestTaskWaitWakesOnChange(t *testing.T) {
	_, tasks := newTasks(t)
	task, _, _ := tasks.NewTask("flow_check", nil, 0, "")
	if task.TTL != DefaultTaskTTL {
		t.Fatalf("default ttl %v", task.TTL)
	}
	done := make(chan Task)
	go func() {
		got, err := tasks.Wait(context.Background(), task.ID, time.Hour)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	if _, err := tasks.Update(task.ID, func(t *Task) { t.Message = "still working" }); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Update(task.ID, func(t *Task) { t.Status = TaskFailed }); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got.Status != TaskFailed {
		t.Fatalf("Wait returned %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other, _, _ := tasks.NewTask("flow_check", nil, 0, "")
	if _, err := tasks.Wait(ctx, other.ID, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
}

func TestTaskListPagesNewestFirst(t *testing.T) {
	_, tasks := newTasks(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := base
	tasks.now = func() time.Time { return clock }
	var ids []string
	for i := range 5 {
		clock = base.Add(time.Duration(i) * time.Minute)
		task, _, err := tasks.NewTask("flow_run", nil, time.Hour, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{task.ID}, ids...)
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		page, next, err := tasks.List(cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range page {
			seen = append(seen, task.ID)
		}
		if next == "" {
			if pages != 2 {
				t.Fatalf("%d pages for 5 tasks of 2", pages+1)
			}
			break
		}
		cursor = next
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Fatalf("pages %v, want newest first %v", seen, ids)
	}
	if _, _, err := tasks.List("ffffffffffffffffffffffffffffffff", 2); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("unknown cursor: %v", err)
	}
	// An hour and a minute later the first task has expired: gone from the
	// list and from Task.
	clock = base.Add(time.Hour + 30*time.Second)
	page, _, _ := tasks.List("", 10)
	if len(page) != 4 {
		t.Fatalf("%d tasks listed after the first expired", len(page))
	}
	if _, err := tasks.Task(ids[4]); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("expired task: %v", err)
	}
}

func TestTaskIdempotencyKey(t *testing.T) {
	_, tasks := newTasks(t)
	a, created, _ := tasks.NewTask("flow_run", json.RawMessage(`{"task":"x"}`), 0, "key-1")
	b, again, _ := tasks.NewTask("flow_run", json.RawMessage(`{"task":"x"}`), 0, "key-1")
	if !created || again || a.ID != b.ID {
		t.Fatalf("same key twice: %s (created %v), %s (created %v)", a.ID, created, b.ID, again)
	}
	c, created, _ := tasks.NewTask("flow_run", nil, 0, "key-2")
	if !created || c.ID == a.ID {
		t.Fatal("another key made no new task")
	}
}

// TestTaskInterruptedByKill runs a task in a real helper process, kills it
// with SIGKILL, and opens the store again: the working task is failed and
// says it was interrupted, and the task the helper finished keeps its
// result.
func TestTaskInterruptedByKill(t *testing.T) {
	f := newFixture(t, Options{})
	cmd, out, _ := startHelper(t, "tasks", false, helperState+"="+f.state, helperRoot+"="+f.root)
	sc := bufio.NewScanner(out)
	var done, working string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "done" {
			done = fields[1]
		}
		if len(fields) == 2 && fields[0] == "working" {
			working = fields[1]
			break
		}
	}
	if done == "" || working == "" {
		t.Fatalf("helper said nothing useful (%v)", sc.Err())
	}
	tasks, err := f.store.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tasks.Task(working); got.Status != TaskWorking {
		t.Fatalf("a task of a live process is %s", got.Status)
	}
	cmd.Process.Kill()
	cmd.Wait()
	tasks, err = f.store.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	got, err := tasks.Task(working)
	if err != nil || got.Status != TaskFailed || !strings.HasPrefix(got.Message, "interrupted") {
		t.Fatalf("killed task: %+v, %v", got, err)
	}
	fin, err := tasks.Task(done)
	if err != nil || fin.Status != TaskCompleted || string(fin.Result) != `{"ok":true}` {
		t.Fatalf("finished task: %+v, %v", fin, err)
	}
	b, err := os.ReadFile(f.store.Dir() + "/tasks/" + working + ".json")
	if err != nil || !strings.Contains(string(b), `"status":"failed"`) {
		t.Fatalf("the interruption was not recorded: %s, %v", b, err)
	}
}

// helperTasks finishes one task, starts another and waits to be killed.
func helperTasks() error {
	store, err := Open(os.Getenv(helperState), os.Getenv(helperRoot), Options{})
	if err != nil {
		return err
	}
	tasks, err := store.Tasks()
	if err != nil {
		return err
	}
	a, _, err := tasks.NewTask("flow_check", nil, 0, "")
	if err != nil {
		return err
	}
	if _, err := tasks.Update(a.ID, func(t *Task) { t.Status = TaskCompleted; t.Result = json.RawMessage(`{"ok":true}`) }); err != nil {
		return err
	}
	fmt.Printf("done %s\n", a.ID)
	b, _, err := tasks.NewTask("flow_run", nil, 0, "")
	if err != nil {
		return err
	}
	fmt.Printf("working %s\n", b.ID)
	select {}
}

func TestStartTimeIdentifiesProcess(t *testing.T) {
	self := selfOwner()
	if self.Start == 0 || self.Boot == "" || !self.Alive() {
		t.Fatalf("this process: %+v alive %v", self, self.Alive())
	}
	if (Owner{PID: self.PID, Start: self.Start + 1, Boot: self.Boot}).Alive() {
		t.Fatal("a different start time at the same pid counts as the same process")
	}
	if (Owner{PID: self.PID, Start: self.Start, Boot: "another-boot"}).Alive() {
		t.Fatal("a process of another boot counts as alive")
	}
}

func TestTaskLookupByKeyAndRun(t *testing.T) {
	_, tasks := newTasks(t)
	a, _, err := tasks.NewTask("flow_run", nil, time.Hour, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Update(a.ID, func(t *Task) { t.RunID = "run-a" }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tasks.NewTask("flow_check", nil, time.Hour, "k1"); err != nil {
		t.Fatal(err)
	}
	// A key names the first submission made with it, whatever its tool.
	got, ok, err := tasks.ByKey("k1")
	if err != nil || !ok || got.ID != a.ID {
		t.Fatalf("ByKey(k1) = %+v, %v, %v; want the first task %s", got, ok, err, a.ID)
	}
	if _, ok, _ := tasks.ByKey("other"); ok {
		t.Fatal("ByKey found a task for an unused key")
	}
	if _, ok, _ := tasks.ByKey(""); ok {
		t.Fatal("an empty key matched a task")
	}
	got, ok, err = tasks.ByRun("run-a")
	if err != nil || !ok || got.ID != a.ID {
		t.Fatalf("ByRun(run-a) = %+v, %v, %v", got, ok, err)
	}
	if _, ok, _ := tasks.ByRun("run-b"); ok {
		t.Fatal("ByRun found a task for an unknown run")
	}
}
