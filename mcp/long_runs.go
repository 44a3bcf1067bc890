package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// Long runs without tasks (doc/design.md §10.11): a plain flow_run that
// returns "running" after wait_seconds, flow_status {run_id}, and the
// idempotency key that names one submission.

// defaultShortHostWait is the default wait_seconds of [ShortHosts].
const defaultShortHostWait = 50 * time.Second

// ShortHosts are the clientInfo.name values (compared case-insensitively)
// of hosts known to cut a tool call at about 60 s whatever the progress:
// Claude Desktop ("claude-ai", "claude-desktop") and the MCP Inspector
// ("mcp-inspector"), which uses the TypeScript SDK's 60 s default. A plain
// flow_run from them returns after 50 s with status "running" unless it
// passes wait_seconds.
var ShortHosts = []string{"claude-ai", "claude-desktop", "mcp-inspector"}

// defaultWait is the default wait_seconds of a plain flow_run by client.
func (s *Server) defaultWait(client string) time.Duration {
	if s.tasks != nil && slices.Contains(ShortHosts, strings.ToLower(client)) {
		return s.shortWait
	}
	return 0
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
