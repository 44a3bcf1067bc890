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

// flowRunTool is flow_run {task}: one bounded planner → coder → reviewer run
// with host verification. It edits files, so it is destructive; it talks
// only to the local model, so it is closed-world.
func (s *Server) flowRunTool() *toolDef {
	input := closedObject(map[string]fieldSchema{
		"task":            {Type: "string", MinLength: 1, Description: "What to change, in plain language, as you would tell a colleague."},
		"wait_seconds":    {Type: "integer", Description: "Return after this many seconds with status \"running\" and the run_id if the run has not finished; the run goes on. Follow it with flow_status {run_id}. 0 waits for the end."},
		"idempotency_key": {Type: "string", Description: "Any string naming this submission: submitting the same key again returns the first run (its task or its result) instead of starting another."},
	}, "task")
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
	return &toolDef{
		name:  "flow_run",
		input: input,
		tool: mcp.Tool{
			Name:            "flow_run",
			Title:           "Run a verified coding task",
			Description:     strings.TrimSpace(flowRunDescription),
			RawInputSchema:  input.raw(),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Run a verified coding task", false, true, false),
			Execution:       s.execution(),
		},
		start: func(ctx context.Context, args map[string]string, progress func(runID, message string)) (*job.Job, error) {
			return s.rt.StartRun(ctx, args["task"], progress)
		},
	}
}
