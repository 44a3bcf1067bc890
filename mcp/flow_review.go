package mcp

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/review"
)

//go:embed flow_review.md
var flowReviewDescription string

// flowReviewArgs are the arguments of flow_review.
type flowReviewArgs struct {
	RunID  string `json:"run_id" desc:"The finished run whose change to review (a run_id from flow_run)."`
	Keep   string `json:"keep,omitempty" desc:"Hunks to keep, comma-separated as flow review --keep: hunk ids, changed files' paths, or \"all\"."`
	Revert string `json:"revert,omitempty" desc:"Hunks to revert, comma-separated as flow review --revert: hunk ids, changed files' paths, or \"all\"."`
}

// flowReviewTool is flow_review {run_id, keep?, revert?} (doc/design.md
// §10.12). It writes files when keep or revert is given (a revert edits
// the workspace: destructive), and repeating a decision changes nothing
// more (idempotent). It is answered inline: the review is a short job
// under the workspace lock, refused with "busy" while a run holds it.
func flowReviewTool(env toolEnv) *toolDef {
	output := objectSchema{
		Type:        "object",
		Description: "The review report (as `flow review` prints); the same JSON is also sent as text content.",
		Properties: map[string]fieldSchema{
			"status":  {Type: "string", Description: `"ok", "conflict" (some lines changed since the run; nothing of those written), "busy" or "error".`},
			"run_id":  {Type: "string"},
			"host":    {Type: "string", Description: "The host's verdict of the run; a review never changes it."},
			"message": {Type: "string"},
			"error":   outError,
		},
		Required: []string{"status"},
	}
	return newTool(env, toolSpec[flowReviewArgs]{
		tool: mcp.Tool{
			Name:            "flow_review",
			Title:           "Review a run's hunks",
			Description:     strings.TrimSpace(flowReviewDescription),
			RawOutputSchema: output.raw(),
			Annotations:     annotations("Review a run's hunks", false, true, true),
		},
		answer: func(ctx context.Context, a flowReviewArgs) (*mcp.CallToolResult, error) {
			if strings.TrimSpace(a.RunID) == "" {
				return errorResult("flow_review needs run_id, the id of a finished run (flow_run's run_id)"), nil
			}
			rep, err := env.rt.Review(ctx, a.RunID, selectors(a.Keep), selectors(a.Revert))
			var in *review.InputError
			if errors.As(err, &in) {
				return errorResult(err.Error()), nil
			}
			if err != nil {
				return nil, err
			}
			return reportResult(rep, rep.Status)
		},
	})
}

// selectors splits a comma-separated list of selectors, dropping empty
// ones: "h1, a.go" is ["h1", "a.go"].
func selectors(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
