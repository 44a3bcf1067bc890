package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"

	"flow/internal/text"
	"flow/runtime/journal"
)

// The tasks/* requests of MCP's tasks utility (2025-11-25, experimental)
// over the task records (records.go), and notifications/tasks/status. A
// task's job runs in a worker process of its own, which outlives its
// server (worker.go); a plain call's job ends with its server and its
// record then says "interrupted".

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// listTasksResult answers tasks/list.
type listTasksResult struct {
	Tasks      []wireTask `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// taskRequestParams are the params of a tasks/* request: {taskId} or
// {cursor}.
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
	switch m.method {
	case "tasks/list":
		ss.listTasks(m.id, p.Cursor)
		return
	case "tasks/get", "tasks/result", "tasks/cancel":
	default:
		_ = ss.out.error(m.id, &rpcError{code: codeMethodNotFound, message: "Method not found: " + text.ClipBytes(m.method, 100)})
		return
	}
	task, ok := ss.namedTask(m.id, p.TaskID)
	if !ok {
		return
	}
	switch m.method {
	case "tasks/get":
		ss.result(m.id, ss.srv.wireTask(task))
	case "tasks/result":
		ctx, done := ss.cancellable(m.id)
		ss.calls.Add(1)
		go func() {
			defer done()
			ss.taskResult(ctx, m.id, task.ID)
		}()
	case "tasks/cancel":
		ss.cancelTask(m.id, task)
	}
}

// listTasks answers tasks/list with the page at cursor (nil: the first).
func (ss *session) listTasks(id json.RawMessage, cursor *string) {
	from := ""
	if cursor != nil {
		from = *cursor
	}
	page, next, err := ss.srv.tasks.List(from, ss.srv.pageSize)
	if err != nil {
		_ = ss.out.error(id, &rpcError{code: codeInvalidParams, message: "Invalid cursor; start again without one"})
		return
	}
	out := listTasksResult{Tasks: make([]wireTask, 0, len(page)), NextCursor: next}
	for _, t := range page {
		out.Tasks = append(out.Tasks, ss.srv.wireTask(t))
	}
	ss.result(id, out)
}

// namedTask returns the task a request names by taskId; when there is no
// such task it answers the request and reports false.
func (ss *session) namedTask(id json.RawMessage, taskID *string) (journal.Task, bool) {
	if taskID == nil {
		_ = ss.out.error(id, errTaskID)
		return journal.Task{}, false
	}
	task, err := ss.srv.tasks.Task(*taskID)
	if errors.Is(err, journal.ErrTaskNotFound) {
		_ = ss.out.error(id, unknownTask(*taskID))
		return journal.Task{}, false
	}
	if err != nil {
		_ = ss.out.error(id, &rpcError{code: codeInternalError, message: err.Error()})
		return journal.Task{}, false
	}
	return task, true
}

// taskResult answers tasks/result for task taskID once it has ended; it
// runs as one of the session's calls. ctx ends with the session or when
// the client cancels the request, which then gets no response. A flow_run
// task's unverified change may first be asked about (task_decision.go).
func (ss *session) taskResult(ctx context.Context, id json.RawMessage, taskID string) {
	defer ss.calls.Done()
	if lt := ss.srv.liveTask(taskID); lt != nil {
		// The job's own goroutine finishes first, so that its
		// notifications/tasks/status precedes this result.
		select {
		case <-lt.done:
		case <-ctx.Done():
			return
		}
	}
	task, err := ss.srv.tasks.Wait(ctx, taskID, taskPollInterval)
	if err != nil {
		if ctx.Err() == nil {
			_ = ss.out.error(id, unknownTask(taskID))
		}
		return
	}
	task = ss.taskDecision(ctx, task)
	if errors.Is(context.Cause(ctx), errRequestCancelled) {
		ss.log.Info("response to a cancelled request not sent", "method", "tasks/result", "id", string(id))
		return
	}
	ss.result(id, taskPayload(task))
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
		lt.stop()
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
func (r *taskRecords) killWorker(task journal.Task) {
	r.log.Warn("task worker did not stop after tasks/cancel: killed", "task", task.ID, "pid", task.Owner.PID)
	_ = task.Owner.Signal(syscall.SIGKILL)
	msg := fmt.Sprintf("cancelled: the task's worker process %d did not stop within %d s of tasks/cancel and was killed; its edits are in the journal (flow undo reverts them)", task.Owner.PID, int(cancelGrace.Seconds()))
	_, _ = r.tasks.Update(task.ID, func(t *journal.Task) { t.Status, t.Message = journal.TaskCancelled, msg })
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
