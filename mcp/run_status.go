package mcp

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// What a record says about a run while it goes on and once it has ended,
// for long runs without tasks (doc/design.md §10.11): a plain flow_run that
// returns "running" after wait_seconds, flow_status {run_id}, and a repeated
// submission of an idempotency key.

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

// runningResult reports task t in progress, at runID's latest message; ""
// for either takes the record's.
func runningResult(t journal.Task, runID, message string) *mcp.CallToolResult {
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

// runningTask reports task t in progress, with the latest event of its job
// when this process runs or watches it.
func (r *taskRecords) runningTask(t journal.Task) *mcp.CallToolResult {
	var rid, msg string
	if lt := r.liveTask(t.ID); lt != nil {
		rid, msg = lt.snapshot()
	}
	return runningResult(t, rid, msg)
}

// stillRunning is the result of a plain call whose wait ran out.
func (r *taskRecords) stillRunning(lt *liveTask) *mcp.CallToolResult {
	rid, msg := lt.snapshot()
	t, err := r.tasks.Task(lt.id)
	if err != nil {
		t = journal.Task{ID: lt.id, CreatedAt: time.Now()}
	}
	return runningResult(t, rid, msg)
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
func (r *taskRecords) runStatus(runID string) (*mcp.CallToolResult, error) {
	if r.tasks == nil {
		return errorResult("run tracking is off: flow has no state directory for this workspace, so flow_status cannot follow run " + runID), nil
	}
	t, ok, err := r.tasks.ByRun(runID)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if !ok {
		return errorResult(fmt.Sprintf("no run %q is known to flow serve in this workspace (runs are kept while their task's ttl lasts); flow_status without run_id shows the last run", runID)), nil
	}
	if t.Terminal() {
		return storedResult(t), nil
	}
	return r.runningTask(t), nil
}
