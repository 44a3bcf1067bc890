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
func flowCheckTool(env toolEnv) *toolDef {
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
	return newTool(env, toolSpec[flowCheckArgs]{
		tool: mcp.Tool{
			Name:            "flow_check",
			Title:           "Run named checks",
			Description:     strings.TrimSpace(flowCheckDescription),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Run named checks", false, false, false),
		},
		task: true,
		start: func(ctx context.Context, a flowCheckArgs, _ func(runID, message string)) (*job.Handle, error) {
			j, err := env.rt.StartCheck(ctx, a.Name)
			return job.Untyped(j), err
		},
	})
}
