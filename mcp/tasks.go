package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// MCP's tasks utility (2025-11-25, experimental) over the workspace's
// durable task store (runtime/journal). Every flow_run and flow_check of a
// server with a store is recorded there, task-augmented or not, so that its
// result outlives the connection and the server: a new `flow serve` answers
// tasks/get, tasks/result and tasks/list for tasks of an earlier one, and a
// task whose server died is failed ("interrupted").

// defaultShortHostWait is the default wait_seconds of [ShortHosts].
const defaultShortHostWait = 50 * time.Second

// taskPollInterval is the pollInterval flow suggests to requestors.
const taskPollInterval = time.Second

// recordInterval bounds how often a running task's latest event is written
// to its record (its first run id is written at once).
const recordInterval = 2 * time.Second

// ShortHosts are the clientInfo.name values (compared case-insensitively)
// of hosts known to cut a tool call at about 60 s whatever the progress:
// Claude Desktop ("claude-ai", "claude-desktop") and the MCP Inspector
// ("mcp-inspector"), which uses the TypeScript SDK's 60 s default. A plain
// flow_run from them returns after 50 s with status "running" unless it
// passes wait_seconds.
var ShortHosts = []string{"claude-ai", "claude-desktop", "mcp-inspector"}

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// defaultWait is the default wait_seconds of a plain flow_run by client.
func (s *Server) defaultWait(client string) time.Duration {
	if s.tasks != nil && slices.Contains(ShortHosts, strings.ToLower(client)) {
		return s.shortWait
	}
	return 0
}

// liveTask is a task whose job this process runs or watches: in this
// process, or in a worker process this server started (doc/design.md
// §10.10), whose events it relays and whose record the worker writes.
type liveTask struct {
	tool      string
	progress  func(string)  // the call's progress notifications
	cancel    func()        // stops the job: cancels it here, signals a worker
	worker    bool          // the job runs in a worker, which writes the record
	cancelled atomic.Bool   // tasks/cancel named it
	done      chan struct{} // closed once the final record is written

	mu      sync.Mutex
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

// snapshot returns the live run id and message.
func (lt *liveTask) snapshot() (runID, message string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.runID, lt.message
}

// record creates the task of a started job; with worker set, as the task
// of this process, a worker of its own, under id.
func (s *Server) record(lt *liveTask, tool string, args json.RawMessage, ttl time.Duration, key string, worker string) (journal.Task, error) {
	var task journal.Task
	var err error
	created := true
	if worker != "" {
		task, created, err = s.tasks.NewWorkerTask(worker, tool, args, ttl, key)
	} else {
		task, _, err = s.tasks.NewTask(tool, args, ttl, key)
	}
	if err != nil {
		return journal.Task{}, err
	}
	if !created {
		// Another process recorded a submission with the key after this
		// server looked: that one is the task.
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

// errResubmitted reports that a worker's idempotency key names a task
// another process recorded first.
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
	return s.tasks.Update(task.ID, func(t *journal.Task) {
		t.Status, t.Message, t.Result = journal.TaskFailed, resultMessage(res), raw
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

// errorResult is the tool result of a failure that has no report.
func errorResult(msg string) *mcp.CallToolResult {
	b, _ := report.Marshal(refusal{Status: report.StatusError, Reason: msg, Error: msg})
	return structuredResult(b, true)
}

// resultMessage is a task's status message for its result: the report's
// status and its error, summary or reason.
func resultMessage(res *mcp.CallToolResult) string {
	var rep struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Summary string `json:"summary"`
		Reason  string `json:"reason"`
	}
	_ = json.Unmarshal(res.RawStructuredContent, &rep)
	msg := rep.Status
	for _, s := range []string{rep.Error, rep.Summary, rep.Reason} {
		if s != "" && strings.HasPrefix(s, rep.Status+":") {
			msg = s // "busy: a run is already …" says its status itself
			break
		}
		if s != "" {
			msg += ": " + s
			break
		}
	}
	return text.ClipBytes(msg, maxProgressBytes)
}

// wireTask is MCP's Task object.
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// createTaskResult answers a task-augmented request.
type createTaskResult struct {
	Task wireTask `json:"task"`
}

// listTasksResult answers tasks/list.
type listTasksResult struct {
	Tasks      []wireTask `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

const wireTime = "2006-01-02T15:04:05.000Z07:00"

// wireTask maps a record to the wire; a task running here reports its
// latest event.
func (s *Server) wireTask(t journal.Task) wireTask {
	msg := t.Message
	if !t.Terminal() {
		if lt := s.liveTask(t.ID); lt != nil {
			if _, m := lt.snapshot(); m != "" {
				msg = m
			}
		}
	}
	w := wireTask{
		TaskID: t.ID, Status: t.Status, StatusMessage: text.ClipBytes(msg, maxProgressBytes),
		CreatedAt: t.CreatedAt.UTC().Format(wireTime), LastUpdatedAt: t.UpdatedAt.UTC().Format(wireTime),
		TTL: t.TTL.Milliseconds(),
	}
	if !t.Terminal() {
		w.PollInterval = taskPollInterval.Milliseconds()
	}
	return w
}

// taskParamsOf decodes {taskId} or {cursor}.
type taskRequestParams struct {
	TaskID *string `json:"taskId"`
	Cursor *string `json:"cursor"`
}

var errTaskID = &rpcError{code: codeInvalidParams, message: "taskId must be the string id of a task"}

// unknownTask is the error for an id the store does not hold.
func unknownTask(id string) *rpcError {
	return &rpcError{code: codeInvalidParams, message: fmt.Sprintf("Unknown or expired task %s; tasks/list shows the tasks kept", text.ClipBytes(fmt.Sprintf("%q", id), 80))}
}

// taskRequest answers tasks/get, tasks/result, tasks/list and tasks/cancel.
func (ss *session) taskRequest(m message) {
	var p taskRequestParams
	if m.params != nil && json.Unmarshal(m.params, &p) != nil {
		_ = ss.out.error(m.id, errParamsObject)
		return
	}
	store := ss.srv.tasks
	if m.method == "tasks/list" {
		cursor := ""
		if p.Cursor != nil {
			cursor = *p.Cursor
		}
		page, next, err := store.List(cursor, ss.srv.pageSize)
		if err != nil {
			_ = ss.out.error(m.id, &rpcError{code: codeInvalidParams, message: "Invalid cursor; start again without one"})
			return
		}
		out := listTasksResult{Tasks: make([]wireTask, 0, len(page)), NextCursor: next}
		for _, t := range page {
			out.Tasks = append(out.Tasks, ss.srv.wireTask(t))
		}
		ss.result(m.id, out)
		return
	}
	switch m.method {
	case "tasks/get", "tasks/result", "tasks/cancel":
	default:
		_ = ss.out.error(m.id, &rpcError{code: codeMethodNotFound, message: "Method not found: " + text.ClipBytes(m.method, 100)})
		return
	}
	if p.TaskID == nil {
		_ = ss.out.error(m.id, errTaskID)
		return
	}
	id := *p.TaskID
	task, err := store.Task(id)
	if errors.Is(err, journal.ErrTaskNotFound) {
		_ = ss.out.error(m.id, unknownTask(id))
		return
	}
	if err != nil {
		_ = ss.out.error(m.id, &rpcError{code: codeInternalError, message: err.Error()})
		return
	}
	switch m.method {
	case "tasks/get":
		ss.result(m.id, ss.srv.wireTask(task))
	case "tasks/result":
		ss.calls.Add(1)
		go func() {
			defer ss.calls.Done()
			if lt := ss.srv.liveTask(id); lt != nil {
				// The job's own goroutine finishes first, so that its
				// notifications/tasks/status precedes this result.
				select {
				case <-lt.done:
				case <-ss.base.Done():
					return
				}
			}
			task, err := store.Wait(ss.base, id, taskPollInterval)
			if err != nil {
				if ss.base.Err() == nil {
					_ = ss.out.error(m.id, unknownTask(id))
				}
				return
			}
			ss.result(m.id, taskPayload(task))
		}()
	case "tasks/cancel":
		ss.cancelTask(m.id, task)
	}
}

// cancelGrace is how long tasks/cancel waits for a worker process to
// record its cancelled task before it kills the worker.
const cancelGrace = 20 * time.Second

// cancelTask answers tasks/cancel for a working task: a job of this
// process is cancelled; a worker process, this server's or an earlier
// one's, is sent journal.CancelSignal and stops its job as a cancel here
// would. The reply is the task once it has ended. A task of another flow
// serve's own process cannot be reached from here.
func (ss *session) cancelTask(id json.RawMessage, task journal.Task) {
	if task.Terminal() {
		_ = ss.out.error(id, &rpcError{code: codeInvalidParams, message: "Cannot cancel task: it is already " + task.Status})
		return
	}
	store, lt := ss.srv.tasks, ss.srv.liveTask(task.ID)
	if lt == nil && !task.Worker {
		_ = ss.out.error(id, &rpcError{code: codeInvalidParams, message: fmt.Sprintf("Cannot cancel task: flow process %d runs it; cancel it there", task.Owner.PID)})
		return
	}
	ss.log.Info("task cancelled by the client", "task", task.ID, "tool", task.Tool)
	if lt != nil {
		lt.cancelled.Store(true)
		lt.cancel()
	} else if err := task.Owner.Signal(journal.CancelSignal); err != nil && !errors.Is(err, journal.ErrOwnerGone) {
		_ = ss.out.error(id, &rpcError{code: codeInternalError, message: "Cannot cancel task: " + err.Error()})
		return
	}
	ss.calls.Add(1)
	go func() {
		defer ss.calls.Done()
		ctx, cancel := context.WithTimeout(ss.base, cancelGrace)
		defer cancel()
		var err error
		if lt != nil {
			select {
			case <-lt.done:
			case <-ctx.Done():
				err = ctx.Err()
			}
		} else {
			_, err = store.Wait(ctx, task.ID, 100*time.Millisecond)
		}
		if err != nil && ss.base.Err() == nil && task.Worker {
			ss.srv.killWorker(task)
		}
		if t, err := store.Task(task.ID); err == nil && ss.base.Err() == nil {
			ss.result(id, ss.srv.wireTask(t))
		}
	}()
}

// killWorker ends a worker process that did not stop within cancelGrace
// of tasks/cancel and records its task cancelled.
func (s *Server) killWorker(task journal.Task) {
	s.log.Warn("task worker did not stop after tasks/cancel: killed", "task", task.ID, "pid", task.Owner.PID)
	_ = task.Owner.Signal(syscall.SIGKILL)
	msg := fmt.Sprintf("cancelled: the task's worker process %d did not stop within %d s of tasks/cancel and was killed; its edits are in the journal (flow undo reverts them)", task.Owner.PID, int(cancelGrace.Seconds()))
	_, _ = s.tasks.Update(task.ID, func(t *journal.Task) { t.Status, t.Message = journal.TaskCancelled, msg })
}

// taskPayload is the tasks/result of a terminal task: exactly the tool
// result a plain call returned, with the related-task _meta.
func taskPayload(t journal.Task) json.RawMessage {
	raw := t.Result
	if len(raw) == 0 {
		raw, _ = toolResultJSON(errorResult(t.Message))
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		members = map[string]json.RawMessage{}
	}
	meta, _ := marshal(map[string]any{relatedTaskKey: map[string]string{"taskId": t.ID}})
	members["_meta"] = meta
	out, _ := marshal(members)
	return out
}

// notifyTask sends notifications/tasks/status for a task.
func (ss *session) notifyTask(id string) {
	if t, err := ss.srv.tasks.Task(id); err == nil {
		_ = ss.out.notify("notifications/tasks/status", ss.srv.wireTask(t))
	}
}

// runningReport is the result of a flow_run that has not finished within
// its wait, and of flow_status {run_id} for a run in progress.
type runningReport struct {
	Status   string `json:"status"`
	Verified bool   `json:"verified"`
	RunID    string `json:"run_id,omitempty"`
	TaskID   string `json:"task_id"`
	Since    string `json:"since,omitempty"`
	Progress string `json:"progress,omitempty"`
	Follow   string `json:"follow"`
}

// running reports a task in progress.
func (s *Server) running(t journal.Task, runID, message string) *mcp.CallToolResult {
	if runID == "" {
		runID = t.RunID
	}
	if message == "" {
		message = t.Message
	}
	follow := fmt.Sprintf("The run goes on. Call flow_status with {\"run_id\": %q} to see its progress and, once it ends, its report.", runID)
	if runID == "" {
		follow = "The run goes on; `flow tasks` on the command line shows it, and flow_status without arguments says when the workspace is free."
	}
	b, _ := report.Marshal(runningReport{Status: "running", RunID: runID, TaskID: t.ID,
		Since: t.CreatedAt.UTC().Format(wireTime), Progress: message, Follow: follow})
	return structuredResult(b, false)
}

// runningResult is the result of a plain call whose wait ran out.
func (s *Server) runningResult(lt *liveTask) *mcp.CallToolResult {
	rid, msg := lt.snapshot()
	t, err := s.tasks.Task(lt.id)
	if err != nil {
		t = journal.Task{ID: lt.id, CreatedAt: time.Now()}
	}
	return s.running(t, rid, msg)
}

// storedResult decodes a recorded tool result.
func storedResult(t journal.Task) *mcp.CallToolResult {
	var w struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if len(t.Result) == 0 || json.Unmarshal(t.Result, &w) != nil || len(w.StructuredContent) == 0 {
		return errorResult(t.Message)
	}
	return structuredResult(w.StructuredContent, w.IsError)
}

// runStatus answers flow_status {run_id}.
func (s *Server) runStatus(runID string) (*mcp.CallToolResult, error) {
	if s.tasks == nil {
		return errorResult("run tracking is off: flow has no state directory for this workspace, so flow_status cannot follow run " + runID), nil
	}
	t, ok, err := s.tasks.ByRun(runID)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if !ok {
		return errorResult(fmt.Sprintf("no run %q is known to flow serve in this workspace (runs are kept while their task's ttl lasts); flow_status without run_id shows the last run", runID)), nil
	}
	if t.Terminal() {
		return storedResult(t), nil
	}
	var rid, msg string
	if lt := s.liveTask(t.ID); lt != nil {
		rid, msg = lt.snapshot()
	}
	return s.running(t, rid, msg), nil
}

// resubmitted answers a flow_run or flow_check whose idempotency key names
// an earlier submission, and reports whether it did. The same tool with the
// same arguments (wait_seconds aside: it says how long to wait, not what to
// do) is a repeat: a task-augmented call gets that task, a plain one its
// result (waited for as a plain call waits, wait long). Anything else
// reuses the key for another submission, which is refused with an error
// result, as payment APIs refuse it: returning the first submission's
// result would silently drop the second.
func (ss *session) resubmitted(id json.RawMessage, tool string, p callParams, key string, wait time.Duration) bool {
	t, ok, err := ss.srv.tasks.ByKey(key)
	if err != nil || !ok {
		return false
	}
	if !sameSubmission(t, tool, p.arguments) {
		ss.log.Info("idempotency key reused", "tool", tool, "task", t.ID)
		ss.refuse(id, tool, p, errorResult(keyReused(key, t)))
		return true
	}
	ss.log.Info("idempotent resubmission", "tool", tool, "task", t.ID)
	if p.task != nil {
		ss.result(id, createTaskResult{Task: ss.srv.wireTask(t)})
		return true
	}
	if t.Terminal() {
		ss.replyTool(id, storedResult(t), nil)
		return true
	}
	ss.calls.Add(1)
	go func() {
		defer ss.calls.Done()
		ctx, cancel := ss.base, func() {}
		if wait > 0 {
			ctx, cancel = context.WithTimeout(ss.base, wait)
		}
		defer cancel()
		done, err := ss.srv.tasks.Wait(ctx, t.ID, taskPollInterval)
		switch {
		case ss.out.isShut() || ss.base.Err() != nil:
		case err == nil:
			ss.replyTool(id, storedResult(done), nil)
		default:
			var rid, msg string
			if lt := ss.srv.liveTask(t.ID); lt != nil {
				rid, msg = lt.snapshot()
			}
			ss.replyTool(id, ss.srv.running(done, rid, msg), nil)
		}
	}()
	return true
}

// sameSubmission reports whether a call of tool with args repeats the
// submission t: the same tool and the same arguments, compared as JSON
// values, without wait_seconds and with "" standing for an absent string
// (an empty check name, like none, means every check).
func sameSubmission(t journal.Task, tool string, args json.RawMessage) bool {
	return t.Tool == tool && reflect.DeepEqual(submission(t.Arguments), submission(args))
}

// submission decodes arguments for [sameSubmission].
func submission(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	for k, v := range m {
		if k == "wait_seconds" || v == "" {
			delete(m, k)
		}
	}
	return m
}

// keyReused is the error of a submission that reuses another's key.
func keyReused(key string, first journal.Task) string {
	args := submission(first.Arguments)
	delete(args, "idempotency_key")
	what, _ := json.Marshal(args)
	return fmt.Sprintf("idempotency_key %s was already used for another submission (%s %s, task %s, %s); use a new key for a new submission, or repeat that one's arguments exactly to get its result",
		strconv.Quote(text.ClipBytes(key, 80)), first.Tool, text.ClipBytes(string(what), 200), first.ID, first.CreatedAt.UTC().Format(time.RFC3339))
}
