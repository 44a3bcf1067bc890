package journal

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownerOf identifies a child process.
func ownerOf(t *testing.T, pid int) Owner {
	t.Helper()
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return Owner{PID: pid, Start: st.start, Boot: bootID()}
}

// TestZombieOwnerIsGone: a worker that died but was not reaped yet (its
// parent server is busy, or init does not reap) is not alive, although
// its pid still answers kill(pid, 0).
func TestZombieOwnerIsGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	o := ownerOf(t, cmd.Process.Pid)
	for i := 0; ; i++ {
		if st, _ := readStat(o.PID); st.state == 'Z' {
			break
		}
		if i == 500 {
			t.Fatal("the child never became a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !alive(o.PID) {
		t.Fatal("kill(pid, 0) fails for a zombie: the test shows nothing")
	}
	if o.Alive() {
		t.Fatal("a zombie counts as a live owner")
	}
}

// TestSignalReachesOnlyTheOwner: Signal reaches the owner process, and a
// process at the owner's pid with another start time (a reused pid) is
// left alone.
func TestSignalReachesOnlyTheOwner(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	o := ownerOf(t, cmd.Process.Pid)
	other := o
	other.Start++
	if err := other.Signal(syscall.SIGTERM); !errors.Is(err, ErrOwnerGone) {
		t.Fatalf("Signal to a reused pid = %v, want ErrOwnerGone", err)
	}
	if st, err := readStat(o.PID); err != nil || st.state == 'Z' {
		t.Fatal("the process at the reused pid was signalled")
	}
	if err := o.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("the owner ended with %v, want SIGTERM", err)
	}
	if err := o.Signal(syscall.SIGTERM); !errors.Is(err, ErrOwnerGone) {
		t.Fatalf("Signal to a reaped owner = %v, want ErrOwnerGone", err)
	}
}

// TestDeadWorkerTaskSaysWhy: a working task whose worker process is gone
// is failed with a message naming the worker and its log's last words, and
// the log goes when the record does.
func TestDeadWorkerTaskSaysWhy(t *testing.T) {
	_, tasks := newTasks(t)
	id, err := NewTaskID()
	if err != nil {
		t.Fatal(err)
	}
	task, created, err := tasks.NewWorkerTask(id, "flow_run", json.RawMessage(`{"task":"x"}`), time.Hour, "")
	if err != nil || !created || !task.Worker || task.ID != id {
		t.Fatalf("NewWorkerTask = %+v, %v, %v", task, created, err)
	}
	log, err := tasks.CreateLog(id)
	if err != nil {
		t.Fatal(err)
	}
	log.WriteString("time=… level=WARN msg=\"something\"\npanic: the model said no\n\ngoroutine 1 [running]:\nmain.main()\n")
	log.Close()
	if _, err := tasks.CreateLog(id); err == nil {
		t.Fatal("CreateLog opened an existing log")
	}
	// Pretend the worker was a process that has ended.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := Owner{PID: cmd.Process.Pid, Start: 1, Boot: bootID()}
	if _, err := tasks.Update(id, func(t *Task) { t.Owner = dead }); err != nil {
		t.Fatal(err)
	}
	got, err := tasks.Task(id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != TaskFailed || !strings.Contains(got.Message, "worker process") || !strings.Contains(got.Message, "its log says: panic: the model said no") {
		t.Fatalf("dead worker's task = %q %q, want failed naming the worker and its panic", got.Status, got.Message)
	}
	tasks.remove(id)
	if _, err := os.Stat(tasks.LogPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the log outlived its record: %v", err)
	}
}

func TestLogTail(t *testing.T) {
	_, tasks := newTasks(t)
	for _, tc := range []struct{ log, want string }{
		{"", ""},
		{"one\ntwo\n\n", "two"},
		{"fatal error: all goroutines are asleep\nmore\n", "fatal error: all goroutines are asleep"},
	} {
		id, _ := NewTaskID()
		f, err := tasks.CreateLog(id)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(tc.log)
		f.Close()
		if got := tasks.LogTail(id); got != tc.want {
			t.Errorf("LogTail of %q = %q, want %q", tc.log, got, tc.want)
		}
		tasks.RemoveEmptyLog(id)
		if _, err := os.Stat(tasks.LogPath(id)); (err == nil) == (tc.log == "") {
			t.Errorf("RemoveEmptyLog with %q: stat %v", tc.log, err)
		}
	}
}

// TestTaskOfAnotherBoot: after a reboot a working task's worker is gone
// whatever its pid and start time now name; the next reader fails it.
func TestTaskOfAnotherBoot(t *testing.T) {
	_, tasks := newTasks(t)
	id, _ := NewTaskID()
	if _, _, err := tasks.NewWorkerTask(id, "flow_check", nil, time.Hour, ""); err != nil {
		t.Fatal(err)
	}
	self := selfOwner()
	before := Owner{PID: self.PID, Start: self.Start, Boot: "an-earlier-boot"}
	if _, err := tasks.Update(id, func(t *Task) { t.Owner = before }); err != nil {
		t.Fatal(err)
	}
	got, err := tasks.Task(id)
	if err != nil || got.Status != TaskFailed || !strings.Contains(got.Message, "or the machine restarted") {
		t.Fatalf("task of an earlier boot = %+v, %v; want failed", got, err)
	}
}
