package agent

import (
	"context"
	"errors"

	"flow/runtime/job"
	"flow/runtime/report"
	"flow/runtime/review"
)

// Review reads run runID's change as hunks ("" for the workspace's last
// run) and applies the person's decisions: keep and revert select hunks
// by id, a changed file's path or "all" (doc/design.md §12.7); both empty
// only lists. It runs as a job, under the workspace lock, through the
// service's file system, so in Neovim a revert is a buffer edit. A review
// that cannot be made as asked (no such run or hunk, nothing changed) is
// a [*review.InputError] and writes nothing; a busy workspace is a report
// with status busy.
func (s *Service) Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error) {
	cfg := s.Config()
	if s.opts.Store == nil {
		return report.ReviewReport{Status: report.StatusUnavailable, RunID: runID, Workspace: cfg.Workspace,
			Message: "review is unavailable: the write journal could not be opened",
			Error:   "the write journal could not be opened"}, nil
	}
	var failed error
	j, err := job.Start(&s.gate, ctx, job.KindReview, func(ctx context.Context, _ *job.Job[report.ReviewReport]) (report.ReviewReport, string) {
		rv, err := review.Open(ctx, s.opts.Store, s.opts.FS, runID)
		if err != nil {
			failed = err
			return report.ReviewReport{}, report.StatusError
		}
		rep := rv.Report()
		if len(keep)+len(revert) > 0 {
			rep, failed = rv.Apply(ctx, keep, revert)
		}
		return rep, rep.Status
	}, func(p any) report.ReviewReport {
		return report.ReviewReport{Status: report.StatusError, RunID: runID, Workspace: cfg.Workspace, Error: job.PanicMessage(job.KindReview, p)}
	})
	if err != nil {
		return report.ReviewReport{Status: failure(err), RunID: runID, Workspace: cfg.Workspace, Message: err.Error(), Error: err.Error()}, nil
	}
	rep, _ := j.Result()
	var in *review.InputError
	if errors.As(failed, &in) {
		return report.ReviewReport{}, failed
	}
	if failed != nil {
		rep.Status, rep.Error = report.StatusError, failed.Error()
		rep.RunID, rep.Workspace = runID, cfg.Workspace
		rep.Message = "the review failed: " + failed.Error()
	}
	return rep, nil
}
