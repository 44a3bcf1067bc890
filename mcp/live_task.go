package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// A task's job as this process sees it: a job it runs itself (a plain call,
// or a task of a server without workers), whose record it writes, or a job
// a worker process it started runs (doc/design.md §10.10), whose events it
// relays while the worker writes the record.

// recordInterval bounds how often a running task's latest event is written
// to its record (its first run id is written at once).
const recordInterval = 2 * time.Second

// liveTask is a task whose job this process runs or watches: in this
// process, or in a worker process this server started (doc/design.md
// §10.10), whose events it relays and whose record the worker writes.
type liveTask struct {
	tool      string
	progress  func(string)  // the call's progress notifications
	worker    bool          // the job runs in a worker, which writes the record
	cancelled atomic.Bool   // tasks/cancel named it
	done      chan struct{} // closed once the final record is written

	mu      sync.Mutex
	cancel  func() // stops the job: cancels it here, signals a worker; nil until it started
	srv     *Server
	id      string
	runID   string
	message string
	written time.Time
	pending *time.Timer // a flush of the latest event, due at written+recordInterval
}

// event receives one runtime event line: it goes to the call's progress and
// becomes the task's status message. The record gets a new run id at once
// and the latest message at most every recordInterval, the last one of a
// burst included (a long model call follows it).
func (lt *liveTask) event(runID, message string) {
	if message != "" {
		lt.progress(message)
	}
	lt.mu.Lock()
	newRun := runID != "" && lt.runID == ""
	if runID != "" {
		lt.runID = runID
	}
	if message != "" {
		lt.message = message
	}
	record := lt.id != "" && !lt.worker
	since := time.Since(lt.written)
	flush := record && (newRun || since >= recordInterval)
	if flush {
		lt.written = time.Now()
	} else if record && lt.pending == nil {
		lt.pending = time.AfterFunc(recordInterval-since, lt.flush)
	}
	lt.mu.Unlock()
	if flush {
		lt.flush()
	}
}

// flush writes the latest run id and message to the record.
func (lt *liveTask) flush() {
	lt.mu.Lock()
	if lt.pending != nil {
		lt.pending.Stop()
		lt.pending = nil
	}
	lt.written = time.Now()
	srv, id, rid, msg := lt.srv, lt.id, lt.runID, lt.message
	lt.mu.Unlock()
	_, _ = srv.tasks.Update(id, func(t *journal.Task) { t.RunID, t.Message = rid, msg })
}

// stopFlushing cancels a pending flush: the final record follows.
func (lt *liveTask) stopFlushing() {
	lt.mu.Lock()
	if lt.pending != nil {
		lt.pending.Stop()
		lt.pending = nil
	}
	lt.mu.Unlock()
}

// started gives lt the function that stops its job, which started after
// its record was written; a tasks/cancel that came in between stops it at
// once.
func (lt *liveTask) started(cancel func()) {
	lt.mu.Lock()
	lt.cancel = cancel
	lt.mu.Unlock()
	if lt.cancelled.Load() {
		cancel()
	}
}

// stop marks lt cancelled by its requestor and stops its job, or, when the
// job has not started yet, has [liveTask.started] stop it.
func (lt *liveTask) stop() {
	lt.cancelled.Store(true)
	lt.mu.Lock()
	cancel := lt.cancel
	lt.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// snapshot returns the live run id and message.
func (lt *liveTask) snapshot() (runID, message string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.runID, lt.message
}

// record creates the task of a job about to start (doc/design.md §10.10):
// written before the job can change anything, so that a process killed at
// any point after leaves a record that says so. With worker set, as the
// task of this process, a worker of its own, under id. A job that then
// does not start ends its record with [Server.unstarted]. When another
// process recorded a submission with key since the caller looked, that
// task is returned with errResubmitted, and nothing is watched.
func (s *Server) record(lt *liveTask, tool string, args json.RawMessage, ttl time.Duration, key string, worker string) (journal.Task, error) {
	var task journal.Task
	var err error
	created := true
	if worker != "" {
		task, created, err = s.tasks.NewWorkerTask(worker, tool, args, ttl, key)
	} else {
		task, created, err = s.tasks.NewTask(tool, args, ttl, key)
	}
	if err != nil {
		return journal.Task{}, err
	}
	if !created {
		return task, errResubmitted
	}
	s.watch(lt, task.ID)
	lt.mu.Lock()
	rid, msg := lt.runID, lt.message
	lt.written = time.Now()
	lt.mu.Unlock()
	if rid != "" || msg != "" {
		if t, err := s.tasks.Update(task.ID, func(t *journal.Task) { t.RunID, t.Message = rid, msg }); err == nil {
			task = t
		}
	}
	return task, nil
}

// unstarted ends the record of a job that did not start after all, with
// res, its refusal: a task's record fails with it, as a task-augmented call
// that does not run always gets a task; a plain call's is discarded, as
// such a call is only answered. It returns the task as recorded.
func (s *Server) unstarted(lt *liveTask, res *mcp.CallToolResult, asTask bool) (journal.Task, error) {
	defer s.release(lt)
	if !asTask {
		return journal.Task{}, s.tasks.Discard(lt.id)
	}
	raw, err := toolResultJSON(res)
	if err != nil {
		return journal.Task{}, err
	}
	return s.fail(lt.id, res, raw)
}

// errResubmitted reports that an idempotency key names a task another
// process recorded after the caller looked it up.
var errResubmitted = errors.New("the idempotency key names another task")

// watch makes lt the live task id of this process.
func (s *Server) watch(lt *liveTask, id string) {
	lt.done = make(chan struct{})
	lt.mu.Lock()
	lt.srv, lt.id = s, id
	lt.mu.Unlock()
	s.liveMu.Lock()
	s.live[id] = lt
	s.liveMu.Unlock()
}

// failedTask records a task that failed before it started, with its
// result (a refusal with isError); with worker set, as the task of this
// worker process under that id.
func (s *Server) failedTask(tool string, args json.RawMessage, ttl time.Duration, res *mcp.CallToolResult, worker string) (journal.Task, error) {
	raw, err := toolResultJSON(res)
	if err != nil {
		return journal.Task{}, err
	}
	var task journal.Task
	if worker != "" {
		task, _, err = s.tasks.NewWorkerTask(worker, tool, args, ttl, "")
	} else {
		task, _, err = s.tasks.NewTask(tool, args, ttl, "")
	}
	if err != nil {
		return journal.Task{}, err
	}
	return s.fail(task.ID, res, raw)
}

// fail ends task id as failed with res, the result of a job that did not
// run, encoded as raw. It holds no idempotency key: a submission refused as
// busy can be retried with its key (doc/design.md §10.11).
func (s *Server) fail(id string, res *mcp.CallToolResult, raw json.RawMessage) (journal.Task, error) {
	return s.tasks.Update(id, func(t *journal.Task) {
		t.Status, t.Message, t.Result = journal.TaskFailed, resultMessage(res), raw
		t.IdempotencyKey = ""
	})
}

// liveTask returns the task's job in this process, if any.
func (s *Server) liveTask(id string) *liveTask {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.live[id]
}

// finishTask writes the final record of a job's task: its status, why, and
// the exact tool result (or, for a tool that panicked, an error report).
// interrupted, when not "", is why the job was stopped by the process
// rather than by its requestor: the task then failed with that message.
func (s *Server) finishTask(lt *liveTask, res *mcp.CallToolResult, err error, cancelled bool, interrupted string) {
	if lt.id == "" {
		return
	}
	lt.stopFlushing()
	if err != nil {
		res = errorResult(err.Error())
	}
	raw, encErr := toolResultJSON(res)
	if encErr != nil {
		raw, _ = toolResultJSON(errorResult(encErr.Error()))
	}
	status, message := journal.TaskCompleted, resultMessage(res)
	switch {
	case cancelled:
		// A cancelled job's report says so itself ("cancelled: The run
		// was cancelled; …"); one that ended before the cancel reached it
		// keeps its own result, and the message says both.
		status = journal.TaskCancelled
		if !strings.HasPrefix(message, report.StatusCancelled) {
			message = "cancelled after it ended: " + message
		}
	case interrupted != "":
		status, message = journal.TaskFailed, interrupted
	case res.IsError:
		status = journal.TaskFailed
	}
	rid, _ := lt.snapshot()
	if _, err := s.tasks.Update(lt.id, func(t *journal.Task) {
		t.Status, t.Message, t.Result = status, message, raw
		if rid != "" {
			t.RunID = rid
		}
	}); err != nil {
		s.log.Warn("task result not recorded", "task", lt.id, "error", err.Error())
	}
}

// serverStopped is a task's message when its job ran in a flow serve that
// was stopped before the job finished.
const serverStopped = "interrupted: the flow server was stopped before the task finished; its edits are in the journal (flow undo reverts them)"

// release forgets a finished live task; waiters on lt.done (tasks/result,
// tasks/cancel) go on, after its status notification.
func (s *Server) release(lt *liveTask) {
	if lt.id == "" {
		return
	}
	s.liveMu.Lock()
	delete(s.live, lt.id)
	s.liveMu.Unlock()
	close(lt.done)
}
