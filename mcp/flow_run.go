package mcp

import (
	"context"
	_ "embed"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
)

//go:embed flow_run.md
var flowRunDescription string

// flowRunArgs are the arguments of flow_run. wait_seconds is bounded above
// so that it converts to a time.Duration without overflow; its bound is the
// largest 32-bit int.
type flowRunArgs struct {
	Task           string `json:"task" min:"1" desc:"What to change, in plain language, as you would tell a colleague."`
	WaitSeconds    *int   `json:"wait_seconds,omitempty" min:"0" max:"2147483647" desc:"Return after this many seconds with status \"running\" and the run_id if the run has not finished; the run goes on. Follow it with flow_status {run_id}. 0 waits for the end."`
	IdempotencyKey string `json:"idempotency_key,omitempty" desc:"Any string naming this submission: submitting the same key again returns the first run (its task or its result) instead of starting another."`
}

// flowRunTool is flow_run {task}: one bounded planner → coder → reviewer run
// with host verification. It edits files, so it is destructive; it talks
// only to the local model, so it is closed-world.
func flowRunTool(env toolEnv) *toolDef {
	output := objectSchema{
		Type:        "object",
		Description: "The run report; the same JSON is also sent as text content.",
		Properties: map[string]fieldSchema{
			"status":   outStatus,
			"verified": outVerified,
			"task":     {Type: "string"},
			"run_id":   {Type: "string", Description: "Identifies the run for `flow undo` and flow_status {run_id}."},
			"summary":  {Type: "string"},
			"error":    outError,
		},
		Required: []string{"status", "verified"},
	}
	return newTool(env, toolSpec[flowRunArgs]{
		tool: mcp.Tool{
			Name:            "flow_run",
			Title:           "Run a verified coding task",
			Description:     strings.TrimSpace(flowRunDescription),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Run a verified coding task", false, true, false),
		},
		task: true,
		start: func(ctx context.Context, a flowRunArgs, progress func(runID, message string)) (*job.Handle, error) {
			j, err := env.rt.StartRun(ctx, a.Task, progress)
			return job.Untyped(j), err
		},
		wait: func(a flowRunArgs) *int { return a.WaitSeconds },
		key:  func(a flowRunArgs) string { return a.IdempotencyKey },
	})
}
