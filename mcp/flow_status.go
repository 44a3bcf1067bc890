package mcp

import (
	"context"
	_ "embed"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

//go:embed flow_status.md
var flowStatusDescription string

// flowStatusArgs are the arguments of flow_status. RunID is a pointer
// because a given run_id, even "", asks about that run instead of flow.
type flowStatusArgs struct {
	RunID *string `json:"run_id,omitempty" desc:"A run started by flow_run (also one that returned \"running\"): its progress while it runs, then its report."`
}

// flowStatusTool is flow_status {}: read-only, idempotent, closed-world, and
// answered inline by the frame loop, also while a run is in progress.
func flowStatusTool(env toolEnv) *toolDef {
	output := objectSchema{
		Type:        "object",
		Description: "The status report; the same JSON is also sent as text content.",
		Properties: map[string]fieldSchema{
			"status":    {Type: "string", Description: `"ok", or "stale" when the workspace root changed.`},
			"version":   {Type: "string"},
			"workspace": {Type: "string"},
			"trusted":   {Type: "boolean", Description: "Edits and named checks are enabled."},
			"busy":      {Type: "boolean", Description: "A run or check is in progress."},
			"error":     outError,
		},
		Required: []string{"status"},
	}
	return newTool(env, toolSpec[flowStatusArgs]{
		tool: mcp.Tool{
			Name:            "flow_status",
			Title:           "Flow status",
			Description:     strings.TrimSpace(flowStatusDescription),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Flow status", true, false, true),
		},
		answer: func(ctx context.Context, a flowStatusArgs) (*mcp.CallToolResult, error) {
			if a.RunID != nil {
				return env.runStatus(*a.RunID)
			}
			rep := env.rt.Status(ctx)
			return reportResult(rep, rep.Status)
		},
	})
}
