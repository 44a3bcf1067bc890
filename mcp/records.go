package mcp

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// taskRecords are a server's task records over the workspace's durable
// task store (runtime/journal, doc/design.md §10.10), and the live tasks
// whose jobs this process runs or watches. Every flow_run and flow_check of
// a server with a store is recorded there, task-augmented or not, so that
// its result outlives the connection and the server: a new `flow serve`
// answers tasks/get, tasks/result, tasks/list, tasks/cancel and
// flow_status {run_id} for tasks of an earlier one. [Server] embeds them.
type taskRecords struct {
	tasks  *journal.Tasks // nil: nothing is recorded
	log    *slog.Logger
	liveMu sync.Mutex
	live   map[string]*liveTask // tasks whose job this process runs or watches
}

func newTaskRecords(tasks *journal.Tasks, log *slog.Logger) *taskRecords {
	return &taskRecords{tasks: tasks, log: log, live: make(map[string]*liveTask)}
}

// taskPollInterval is the pollInterval flow suggests to requestors.
const taskPollInterval = time.Second

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

const wireTime = "2006-01-02T15:04:05.000Z07:00"

// wireTask maps a record to the wire; a task running here reports its
// latest event.
func (r *taskRecords) wireTask(t journal.Task) wireTask {
	msg := t.Message
	if !t.Terminal() {
		if lt := r.liveTask(t.ID); lt != nil {
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

// record creates the task of a job about to start (doc/design.md §10.10):
// written before the job can change anything, so that a process killed at
// any point after leaves a record that says so. With worker set, as the
// task of this process, a worker of its own, under id. A job that then
// does not start ends its record with [taskRecords.unstarted]. When another
// process recorded a submission with key since the caller looked, that
// task is returned with errResubmitted, and nothing is watched.
func (r *taskRecords) record(lt *liveTask, tool string, args json.RawMessage, ttl time.Duration, key string, worker string) (journal.Task, error) {
	var task journal.Task
	var err error
	created := true
	if worker != "" {
		task, created, err = r.tasks.NewWorkerTask(worker, tool, args, ttl, key)
	} else {
		task, created, err = r.tasks.NewTask(tool, args, ttl, key)
	}
	if err != nil {
		return journal.Task{}, err
	}
	if !created {
		return task, errResubmitted
	}
	r.watch(lt, task.ID)
	lt.mu.Lock()
	rid, msg := lt.runID, lt.message
	lt.written = time.Now()
	lt.mu.Unlock()
	if rid != "" || msg != "" {
		if t, err := r.tasks.Update(task.ID, func(t *journal.Task) { t.RunID, t.Message = rid, msg }); err == nil {
			task = t
		}
	}
	return task, nil
}

// unstarted ends the record of a job that did not start after all, with
// res, its refusal: a task's record fails with it, as a task-augmented call
// that does not run always gets a task; a plain call's is discarded, as
// such a call is only answered. It returns the task as recorded.
func (r *taskRecords) unstarted(lt *liveTask, res *mcp.CallToolResult, asTask bool) (journal.Task, error) {
	defer r.release(lt)
	if !asTask {
		return journal.Task{}, r.tasks.Discard(lt.id)
	}
	raw, err := toolResultJSON(res)
	if err != nil {
		return journal.Task{}, err
	}
	return r.fail(lt.id, res, raw)
}

// errResubmitted reports that an idempotency key names a task another
// process recorded after the caller looked it up.
var errResubmitted = errors.New("the idempotency key names another task")

// watch makes lt the live task id of this process.
func (r *taskRecords) watch(lt *liveTask, id string) {
	lt.done = make(chan struct{})
	lt.mu.Lock()
	lt.store, lt.id = r.tasks, id
	lt.mu.Unlock()
	r.liveMu.Lock()
	r.live[id] = lt
	r.liveMu.Unlock()
}

// failedTask records a task that failed before it started, with its
// result (a refusal with isError); with worker set, as the task of this
// worker process under that id.
func (r *taskRecords) failedTask(tool string, args json.RawMessage, ttl time.Duration, res *mcp.CallToolResult, worker string) (journal.Task, error) {
	raw, err := toolResultJSON(res)
	if err != nil {
		return journal.Task{}, err
	}
	var task journal.Task
	if worker != "" {
		task, _, err = r.tasks.NewWorkerTask(worker, tool, args, ttl, "")
	} else {
		task, _, err = r.tasks.NewTask(tool, args, ttl, "")
	}
	if err != nil {
		return journal.Task{}, err
	}
	return r.fail(task.ID, res, raw)
}

// fail ends task id as failed with res, the result of a job that did not
// run, encoded as raw. It holds no idempotency key: a submission refused as
// busy can be retried with its key (doc/design.md §10.11).
func (r *taskRecords) fail(id string, res *mcp.CallToolResult, raw json.RawMessage) (journal.Task, error) {
	return r.tasks.Update(id, func(t *journal.Task) {
		t.Status, t.Message, t.Result = journal.TaskFailed, resultMessage(res), raw
		t.IdempotencyKey = ""
	})
}

// liveTask returns the task's job in this process, if any.
func (r *taskRecords) liveTask(id string) *liveTask {
	r.liveMu.Lock()
	defer r.liveMu.Unlock()
	return r.live[id]
}

// finishTask writes the final record of a job's task: its status, why, and
// the exact tool result (or, for a tool that panicked, an error report).
// interrupted, when not "", is why the job was stopped by the process
// rather than by its requestor: the task then failed with that message.
func (r *taskRecords) finishTask(lt *liveTask, res *mcp.CallToolResult, err error, cancelled bool, interrupted string) {
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
	if _, err := r.tasks.Update(lt.id, func(t *journal.Task) {
		t.Status, t.Message, t.Result = status, message, raw
		if rid != "" {
			t.RunID = rid
		}
	}); err != nil {
		r.log.Warn("task result not recorded", "task", lt.id, "error", err.Error())
	}
}

// serverStopped is a task's message when its job ran in a flow serve that
// was stopped before the job finished.
const serverStopped = "interrupted: the flow server was stopped before the task finished; its edits are in the journal (flow undo reverts them)"

// release forgets a finished live task; waiters on lt.done (tasks/result,
// tasks/cancel) go on, after its status notification.
func (r *taskRecords) release(lt *liveTask) {
	if lt.id == "" {
		return
	}
	r.liveMu.Lock()
	delete(r.live, lt.id)
	r.liveMu.Unlock()
	close(lt.done)
}
