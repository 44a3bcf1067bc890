package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
// tasks/get, tasks/result, tasks/list and tasks/cancel for tasks of an
// earlier one. A task's job runs in a worker process of its own, which
// outlives its server (worker.go); a plain call's job ends with its server
// and its record then says "interrupted".

// taskPollInterval is the pollInterval flow suggests to requestors.
const taskPollInterval = time.Second

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

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
