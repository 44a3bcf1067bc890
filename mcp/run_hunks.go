package mcp

import (
	"context"

	"flow/runtime/job"

	"flow/runtime/report"
)

// runWithHunks is flow_run's result: the run report with the hunks of its
// change (doc/design.md §10.12) and, when the person was asked whether to
// keep an unverified change, what came of it.
type runWithHunks struct {
	report.Run
	Hunks    []report.Hunk `json:"hunks,omitempty"`
	Decision *runDecision  `json:"decision,omitempty"`
}

// runDecision is what came of the question after an unverified run: the
// answer ("keep", "revert", "later", "decline", "cancel", or "none" when
// none came), the status of the review it applied, if any, and one
// sentence saying what happened.
type runDecision struct {
	Answer  string `json:"answer"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
}

// withHunks adds to a finished run's report the hunks of its change, read
// through the runtime's Review with no decisions (a list writes nothing).
// The run's job has freed the workspace when its outcome is read; when
// another job took it meanwhile, or the run changed nothing, the report is
// returned as it is.
func withHunks(ctx context.Context, rt Runtime, j *job.Handle) (any, string) {
	rep, status := j.Outcome()
	run, ok := rep.(report.Run)
	if !ok || run.RunID == "" || len(run.ChangedFiles) == 0 {
		return rep, status
	}
	rv, err := rt.Review(ctx, run.RunID, nil, nil)
	if err != nil || rv.Status != report.StatusOK {
		return rep, status
	}
	return runWithHunks{Run: run.Normalize(), Hunks: rv.Hunks}, status
}
