package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"flow/runtime/journal"
)

// The server's side of a task worker (doc/design.md §10.10,
// worker_protocol.go): the step of a tools/call that runs a task in a
// worker process, and the relay of the worker's events while it lives.

// worker is a worker process the server started.
type worker struct {
	cmd    *exec.Cmd
	events *bufio.Reader
	pipe   *os.File // the read end of fd 3
}

// startWorker starts the worker process for req with its stderr in the
// task's log.
func (s *Server) startWorker(req workerRequest) (*worker, error) {
	logf, err := s.tasks.CreateLog(req.TaskID)
	if err != nil {
		return nil, fmt.Errorf("create the task's log: %w", err)
	}
	defer logf.Close()
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	cmd := s.workerCmd()
	cmd.Stdin = strings.NewReader(string(body) + "\n")
	cmd.Stdout, cmd.Stderr = nil, logf
	cmd.ExtraFiles = []*os.File{w}
	// A session of its own: a client that stops the server by its process
	// group (the Python SDK's killpg), a terminal's hangup or Ctrl-C does
	// not reach the worker.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		s.tasks.RemoveEmptyLog(req.TaskID)
		return nil, err
	}
	return &worker{cmd: cmd, events: bufio.NewReaderSize(r, 64<<10), pipe: r}, nil
}

// next reads the worker's next event; io.EOF once it has closed fd 3.
func (w *worker) next() (workerEvent, error) {
	line, err := w.events.ReadSlice('\n')
	if err != nil && !(errors.Is(err, bufio.ErrBufferFull) && len(line) > 0) {
		return workerEvent{}, err
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		// An overlong line (progress is clipped well below this): skip it.
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = w.events.ReadSlice('\n')
		}
		return workerEvent{}, nil
	}
	var ev workerEvent
	_ = json.Unmarshal(line, &ev)
	return ev, nil
}

// errSessionGone reports that the session ended during a handshake.
var errSessionGone = errors.New("the session ended")

// handshake waits for the worker's first line, the task it recorded, at
// most timeout, and not past ctx.
func (w *worker) handshake(ctx context.Context, timeout time.Duration) (journal.Task, error) {
	type first struct {
		ev  workerEvent
		err error
	}
	got := make(chan first, 1)
	go func() {
		for {
			ev, err := w.next()
			if err != nil || ev.Task != nil || ev.Error != "" {
				got <- first{ev, err}
				return
			}
		}
	}()
	select {
	case f := <-got:
		switch {
		case f.err != nil:
			return journal.Task{}, errors.New("it ended without recording the task")
		case f.ev.Error != "":
			return journal.Task{}, errors.New(f.ev.Error)
		case f.ev.Task == nil:
			return journal.Task{}, errors.New("it answered without the task")
		}
		return *f.ev.Task, nil
	case <-time.After(timeout):
		return journal.Task{}, fmt.Errorf("it did not record the task within %s", timeout)
	case <-ctx.Done():
		return journal.Task{}, errSessionGone
	}
}

// end waits for the worker to exit and says how it did, for a task message.
// It first closes the server's end of fd 3, so that a worker whose events
// are no longer read gets EPIPE instead of blocking on a full pipe.
func (w *worker) end() string {
	w.pipe.Close()
	err := w.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %s", signalName(ws.Signal()))
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	default:
		return "ended (" + err.Error() + ")"
	}
}

// runInWorker is the step of a task-augmented job call in a server with
// task workers: it starts the call, validated, in a worker process and
// answers it with the task the worker recorded. The session does not wait
// for the worker: when it ends (stdin closed, SIGTERM) the task goes on,
// and only its progress notifications stop. Any other call goes on.
func (ss *session) runInWorker(rq *toolRequest, next func(*toolRequest)) {
	if !rq.asTask || ss.srv.workerCmd == nil {
		next(rq)
		return
	}
	id, err := journal.NewTaskID()
	if err == nil {
		var w *worker
		req := workerRequest{TaskID: id, Tool: rq.def.name, Arguments: rq.params.arguments, TTLMillis: rq.params.task.ttl.Milliseconds(), IdempotencyKey: rq.call.idempotencyKey}
		if w, err = ss.srv.startWorker(req); err == nil {
			ss.calls.Add(1)
			go ss.adoptWorker(rq, w, id)
			return
		}
	}
	ss.log.Warn("task worker not started", "tool", rq.def.name, "error", err.Error())
	ss.refuse(rq, errorResult("flow could not start the task's worker process ("+err.Error()+"); check that the flow binary and the state directory are still there, then call again"))
}

// adoptWorker answers the call once the worker has recorded the task, then
// relays the worker's events until it exits. It runs as one of the
// session's calls until the answer is written.
func (ss *session) adoptWorker(rq *toolRequest, w *worker, taskID string) {
	s := ss.srv
	task, err := w.handshake(ss.base, s.workerStart)
	if errors.Is(err, errSessionGone) {
		// Interrupted while the worker starts: it goes on, unanswered (its
		// task is in tasks/list); this process only reaps it.
		ss.calls.Done()
		w.end()
		s.tasks.RemoveEmptyLog(taskID)
		return
	}
	if err != nil {
		defer ss.calls.Done()
		ss.workerFailed(rq, w, taskID, err)
		return
	}
	// The worker runs the task unless it was refused (busy, invalid: it
	// recorded why) or found the key's task another process recorded.
	runs := !task.Terminal() && task.ID == taskID && task.Owner.PID == w.cmd.Process.Pid
	c := &jobCall{id: rq.id, key: idKey(rq.id), tool: rq.def.name, token: rq.params.token, out: ss.out}
	lt := &liveTask{tool: rq.def.name, progress: c.progress, worker: true}
	lt.cancel = func() { _ = w.cmd.Process.Signal(journal.CancelSignal) }
	if runs {
		s.tasks.Adopt(task.Owner)
		s.watch(lt, task.ID)
		ss.watchCall(c)
	}
	ss.result(rq.id, createTaskResult{Task: s.wireTask(task)})
	ss.calls.Done()
	if !runs {
		w.end()
		s.tasks.RemoveEmptyLog(taskID)
		return
	}
	go c.heartbeat(s.heartbeat, lt.done)
	go ss.relayWorker(w, c, lt, task)
}

// workerFailed answers a call whose worker did not hand over its task
// (err says why): with the task, when the worker recorded it before it
// died, else with a failed task that says why, after the worker is gone.
func (ss *session) workerFailed(rq *toolRequest, w *worker, taskID string, err error) {
	s := ss.srv
	why := err.Error()
	if lw := s.tasks.LogTail(taskID); lw != "" {
		why += "; its log says: " + lw
	}
	if w.cmd.Process != nil {
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	}
	ended := w.end()
	ss.log.Warn("task worker failed to start", "tool", rq.def.name, "why", why, "ended", ended)
	if t, terr := s.tasks.Task(taskID); terr == nil {
		// It recorded the task and then died: the record says so.
		ss.result(rq.id, createTaskResult{Task: s.wireTask(t)})
		return
	}
	ss.refuse(rq, errorResult("the task's worker process could not start it: "+why))
}

// relayWorker relays the events of the worker running task to its call
// c and live task lt until the worker exits, then records how it ended
// and notifies the client.
func (ss *session) relayWorker(w *worker, c *jobCall, lt *liveTask, task journal.Task) {
	s := ss.srv
	for {
		ev, err := w.next()
		if err != nil {
			break
		}
		lt.event(ev.RunID, ev.Message)
	}
	how := w.end()
	c.finish()
	s.workerEnded(task, how)
	if ss.clientTasks && !ss.ended.Load() {
		ss.notifyTask(task.ID)
	}
	s.release(lt)
}

// workerEnded records how a worker ended when it left its task working:
// the task failed, with the cause (this process, the worker's parent,
// knows it) and the worker's last words.
func (r *taskRecords) workerEnded(task journal.Task, how string) {
	defer r.tasks.RemoveEmptyLog(task.ID)
	msg := journal.WorkerGone(task.Owner.PID, how, r.tasks.LogTail(task.ID))
	if err := r.tasks.WorkerEnded(task.ID, msg); err != nil {
		r.log.Warn("task not recorded as failed", "task", task.ID, "error", err.Error())
	}
}
