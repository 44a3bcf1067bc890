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

// flowCheckArgs are the arguments of flow_check.
type flowCheckArgs struct {
	Name string `json:"name,omitempty" desc:"The configured check to run; omit it (or pass \"\") to run every check."`
}

// flowCheckTool is flow_check {name?}. It runs operator-configured commands,
// so it is not read-only, but it does not edit files (not destructive);
// whether a configured command has side effects is the operator's business,
// so it is not claimed idempotent.
func (s *Server) flowCheckTool() *toolDef {
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
	tool := mcp.Tool{
		Name:            "flow_check",
		Title:           "Run named checks",
		Description:     strings.TrimSpace(flowCheckDescription),
		RawOutputSchema: output.raw(),
		Annotations:     annotations("Run named checks", false, false, false),
		Execution:       s.execution(),
	}
	return newTool(tool, func(a flowCheckArgs) toolCall {
		return toolCall{start: func(ctx context.Context, _ func(runID, message string)) (*job.Handle, error) {
			j, err := s.rt.StartCheck(ctx, a.Name)
			return job.Untyped(j), err
		}}
	})
}
