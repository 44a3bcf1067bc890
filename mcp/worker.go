package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/journal"
)

// A task-augmented flow_run or flow_check runs in a worker process of its
// own (doc/design.md §10.10), so that the task outlives the server and its
// client: `flow task-worker`, started by the server in a session of its
// own, with its stderr in the task's log. The two talk through pipes:
//
//   - stdin: one workerRequest, the validated call;
//   - fd 3: workerEvent lines, first the handshake (the task the worker
//     recorded, or why it could not), then one per runtime event.
//
// The worker takes the workspace lock, records the task as its own and
// writes its events and its result there; the server relays the events to
// its client while it lives, and the next server reads the record. Closing
// stdin, SIGTERM or SIGKILL of the server does not reach the worker;
// journal.CancelSignal is tasks/cancel.

// workerRequest is what the server asks a worker to run.
type workerRequest struct {
	TaskID         string          `json:"task_id"`
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	TTLMillis      int64           `json:"ttl_ms,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// workerEvent is one line from a worker: the handshake (Task or Error)
// or a runtime event.
type workerEvent struct {
	Task    *journal.Task `json:"task,omitempty"`
	Error   string        `json:"error,omitempty"`
	RunID   string        `json:"run_id,omitempty"`
	Message string        `json:"message,omitempty"`
}

// workerStartTimeout bounds the wait for a worker's handshake when
// Options.WorkerStartTimeout is 0.
const workerStartTimeout = time.Minute

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

// signalName is SIGKILL for syscall.SIGKILL.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("%d (%s)", int(sig), sig)
}

// runInWorker starts a validated task-augmented call in a worker process
// and answers it with the task the worker recorded. The session does not
// wait for the worker: when it ends (stdin closed, SIGTERM) the task goes
// on, and only its progress notifications stop.
func (ss *session) runInWorker(m message, def *toolDef, p callParams, key string) {
	s := ss.srv
	id, err := journal.NewTaskID()
	if err == nil {
		var w *worker
		req := workerRequest{TaskID: id, Tool: def.name, Arguments: p.arguments, TTLMillis: p.task.ttl.Milliseconds(), IdempotencyKey: key}
		if w, err = s.startWorker(req); err == nil {
			ss.calls.Add(1)
			go ss.adoptWorker(m.id, def.name, p, w, id)
			return
		}
	}
	ss.log.Warn("task worker not started", "tool", def.name, "error", err.Error())
	ss.refuse(m.id, def.name, p, errorResult("flow could not start the task's worker process ("+err.Error()+"); check that the flow binary and the state directory are still there, then call again"))
}

// adoptWorker answers the call once the worker has recorded the task, then
// relays the worker's events until it exits. It runs as one of the
// session's calls until the answer is written.
func (ss *session) adoptWorker(id json.RawMessage, tool string, p callParams, w *worker, taskID string) {
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
		why := err.Error()
		if lw := s.tasks.LogTail(taskID); lw != "" {
			why += "; its log says: " + lw
		}
		if w.cmd.Process != nil {
			_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		}
		ended := w.end()
		ss.log.Warn("task worker failed to start", "tool", tool, "why", why, "ended", ended)
		if t, terr := s.tasks.Task(taskID); terr == nil {
			// It recorded the task and then died: the record says so.
			ss.result(id, createTaskResult{Task: s.wireTask(t)})
			return
		}
		ss.refuse(id, tool, p, errorResult("the task's worker process could not start it: "+why))
		return
	}
	// The worker runs the task unless it was refused (busy, invalid: it
	// recorded why) or found the key's task another process recorded.
	runs := !task.Terminal() && task.ID == taskID && task.Owner.PID == w.cmd.Process.Pid
	c := &call{id: id, key: idKey(id), tool: tool, token: p.token, out: ss.out}
	lt := &liveTask{tool: tool, progress: c.progress, worker: true}
	lt.cancel = func() { _ = w.cmd.Process.Signal(journal.CancelSignal) }
	if runs {
		s.tasks.Adopt(task.Owner)
		s.watch(lt, task.ID)
		ss.watchCall(c)
	}
	ss.result(id, createTaskResult{Task: s.wireTask(task)})
	ss.calls.Done()
	if !runs {
		w.end()
		s.tasks.RemoveEmptyLog(taskID)
		return
	}
	go c.heartbeat(s.heartbeat, lt.done)
	go func() {
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
	}()
}

// workerEnded records how a worker ended when it left its task working:
// the task failed, with the cause (this process, the worker's parent,
// knows it) and the worker's last words.
func (s *Server) workerEnded(task journal.Task, how string) {
	defer s.tasks.RemoveEmptyLog(task.ID)
	msg := journal.WorkerGone(task.Owner.PID, how, s.tasks.LogTail(task.ID))
	if err := s.tasks.WorkerEnded(task.ID, msg); err != nil {
		s.log.Warn("task not recorded as failed", "task", task.ID, "error", err.Error())
	}
}

// WorkerIO is what `flow task-worker` hands [RunWorker].
type WorkerIO struct {
	// Request is the worker's stdin: the call to run.
	Request io.Reader
	// Events is fd 3, the pipe to the server; writes to it may fail once
	// the server is gone.
	Events io.Writer
	// Signals delivers journal.CancelSignal (tasks/cancel) and the signals
	// that interrupt the worker (SIGTERM, SIGINT, SIGHUP).
	Signals <-chan os.Signal
}

// RunWorker is the body of `flow task-worker`: it reads the call, starts
// its job under the runtime's job system (which takes the workspace lock),
// records the task as this process's, hands the server the task, relays
// the job's events and writes its result to the record — exactly the tool
// result a plain call would have returned. A refusal (busy, invalid
// arguments) is recorded as a failed task. journal.CancelSignal cancels
// the job (the task ends cancelled); another signal interrupts it (failed,
// "interrupted"). It returns an error only when it could record nothing.
func RunWorker(rt Runtime, opts Options, wio WorkerIO) error {
	s := NewServer(rt, opts)
	ev := newEventWriter(wio.Events)
	defer ev.close()
	var req workerRequest
	if err := json.NewDecoder(io.LimitReader(wio.Request, 4*MaxFrameBytes)).Decode(&req); err != nil {
		ev.handshake(workerEvent{Error: "unreadable request: " + err.Error()})
		return fmt.Errorf("read the task request: %w", err)
	}
	def := s.tool[req.Tool]
	if s.tasks == nil || def == nil || def.tool.Execution == nil {
		ev.handshake(workerEvent{Error: "cannot run " + text.ClipBytes(req.Tool, 64) + " as a task here (no task store, or not a task tool)"})
		return fmt.Errorf("cannot run %q as a task", req.Tool)
	}
	ttl := time.Duration(req.TTLMillis) * time.Millisecond
	refused := func(res *mcp.CallToolResult) error {
		task, err := s.failedTask(def.name, req.Arguments, ttl, res, req.TaskID)
		if err != nil {
			ev.handshake(workerEvent{Error: "cannot record the task: " + err.Error()})
			return err
		}
		ev.handshake(workerEvent{Task: &task})
		return nil
	}
	tc, invalid, perr := def.parse(req.Arguments)
	if perr != nil {
		invalid = perr.message
	}
	if invalid != "" {
		return refused(errorResult(invalid))
	}
	lt := &liveTask{tool: def.name, progress: func(string) {}}
	task, err := s.record(lt, def.name, req.Arguments, ttl, req.IdempotencyKey, req.TaskID)
	if err != nil {
		if errors.Is(err, errResubmitted) {
			ev.handshake(workerEvent{Task: &task})
			return nil
		}
		ev.handshake(workerEvent{Error: "cannot record the task: " + err.Error()})
		return err
	}
	j, err := tc.start(context.Background(), func(runID, message string) {
		ev.send(workerEvent{RunID: runID, Message: message})
		lt.event(runID, message)
	})
	if err != nil {
		task, err := s.unstarted(lt, refusedResult(err), true)
		if err != nil {
			ev.handshake(workerEvent{Error: "cannot record the task: " + err.Error()})
			return err
		}
		ev.handshake(workerEvent{Task: &task})
		return nil
	}
	ev.handshake(workerEvent{Task: &task})
	cancelled, interrupted := false, ""
	for sigs := wio.Signals; ; {
		select {
		case <-j.Done():
		case sig := <-sigs:
			if sig == journal.CancelSignal {
				cancelled = interrupted == ""
			} else if interrupted == "" {
				cancelled = false
				interrupted = journal.WorkerGone(os.Getpid(), "was stopped by "+signalLabel(sig), "")
			}
			j.Cancel()
			continue
		}
		break
	}
	rep, status := j.Outcome()
	var res *mcp.CallToolResult
	if p := j.Panic(); p != nil {
		err = fmt.Errorf("panic recovered in %s tool handler: %v", def.name, p)
	} else {
		res, err = reportResult(rep, status)
	}
	s.finishTask(lt, res, err, cancelled, interrupted)
	return nil
}

// signalLabel names a signal for a task message.
func signalLabel(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return signalName(ss)
	}
	return sig.String()
}

// eventWriter sends a worker's events to the server without ever
// blocking the job: the handshake goes first (the job's events may come
// before it and wait), a full buffer drops progress (the record has it),
// and a write error (the server is gone) ends the sending.
type eventWriter struct {
	first chan []byte // the handshake
	lines chan []byte
	done  chan struct{}
}

func newEventWriter(w io.Writer) *eventWriter {
	e := &eventWriter{first: make(chan []byte, 1), lines: make(chan []byte, 256), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		_, err := w.Write(<-e.first)
		broken := err != nil
		for line := range e.lines {
			if !broken {
				_, err := w.Write(line)
				broken = err != nil
			}
		}
	}()
	return e
}

// encode is one event's line.
func (e *eventWriter) encode(ev workerEvent) []byte {
	ev.Message = text.ClipBytes(ev.Message, maxProgressBytes)
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}

// handshake sends the first line: the task, or why there is none. It is
// called once.
func (e *eventWriter) handshake(ev workerEvent) { e.first <- e.encode(ev) }

// send queues one runtime event, or drops it when the queue is full.
func (e *eventWriter) send(ev workerEvent) {
	select {
	case e.lines <- e.encode(ev):
	default:
	}
}

// close flushes the queued events, for at most a second: a server that
// stopped reading without closing its end must not hold the worker.
func (e *eventWriter) close() {
	select {
	case e.first <- nil: // no handshake was sent: write nothing
	default:
	}
	close(e.lines)
	select {
	case <-e.done:
	case <-time.After(time.Second):
	}
}

// WorkerStartFailed tells the server, on events, that the worker could not
// start its task (its configuration or workspace would not open): the
// server answers the call with err.
func WorkerStartFailed(events io.Writer, err error) {
	ev := newEventWriter(events)
	ev.handshake(workerEvent{Error: err.Error()})
	ev.close()
}
