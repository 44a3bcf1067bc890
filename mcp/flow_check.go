package mcp

import (
	"context"
	_ "embed"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
)

//go:embed flow_check.md
var flowCheckDescription string

// flowCheckTool is flow_check {name?}. It runs operator-configured commands,
// so it is not read-only, but it does not edit files (not destructive);
// whether a configured command has side effects is the operator's business,
// so it is not claimed idempotent.
func (s *Server) flowCheckTool() *toolDef {
	input := closedObject(map[string]fieldSchema{
		"name": {Type: "string", Description: "The configured check to run; omit it (or pass \"\") to run every check."},
	})
	output := objectSchema{
		Type:        "object",
		Description: "The check report; the same JSON is also sent as text content.",
		Properties: map[string]fieldSchema{
			"status":   outStatus,
			"verified": outVerified,
			"reason":   {Type: "string"},
			"error":    outError,
		},
		Required: []string{"status", "verified"},
	}
	return &toolDef{
		name:  "flow_check",
		input: input,
		tool: mcp.Tool{
			Name:            "flow_check",
			Title:           "Run named checks",
			Description:     strings.TrimSpace(flowCheckDescription),
			RawInputSchema:  input.raw(),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Run named checks", false, false, false),
			Execution:       s.execution(),
		},
		start: func(ctx context.Context, args map[string]string, _ func(runID, message string)) (*job.Job, error) {
			return s.rt.StartCheck(ctx, args["name"])
		},
	}
}
