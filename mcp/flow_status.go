package mcp

import (
	"context"
	_ "embed"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

//go:embed flow_status.md
var flowStatusDescription string

// flowStatusTool is flow_status {}: read-only, idempotent, closed-world, and
// answered inline by the frame loop, also while a run is in progress.
func (s *Server) flowStatusTool() *toolDef {
	input := closedObject(map[string]fieldSchema{
		"run_id": {Type: "string", Description: "A run started by flow_run (also one that returned \"running\"): its progress while it runs, then its report."},
	})
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
	return &toolDef{
		name:  "flow_status",
		input: input,
		tool: mcp.Tool{
			Name:            "flow_status",
			Title:           "Flow status",
			Description:     strings.TrimSpace(flowStatusDescription),
			RawInputSchema:  input.raw(),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Flow status", true, false, true),
		},
		answer: func(ctx context.Context, args map[string]string) (*mcp.CallToolResult, error) {
			if id, ok := args["run_id"]; ok {
				return s.runStatus(id)
			}
			rep := s.rt.Status(ctx)
			return reportResult(rep, rep.Status)
		},
	}
}
