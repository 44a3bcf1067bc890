package tui

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"flow/runtime/job"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// fakeRuntime is a hand-written Runtime whose jobs run under the runtime's
// real job system (a job.Gate), so busy and cancellation behave as in flow.
// Run emits the scripted events and returns the scripted report; with a
// gate it then waits for the gate or for ctx's cancellation, and reports
// "cancelled" in the latter case.
type fakeRuntime struct {
	jobs job.Gate

	events []progress.Event
	report report.Run

	gate      chan struct{} // non-nil: Run waits on it after emitting
	emitted   chan struct{} // closed when Run has emitted its events
	cancelled chan struct{} // closed when Run observed ctx.Done()
	returned  atomic.Bool   // set just before Run returns

	checkReport report.CheckReport
	status      report.Status
	models      []model.ModelInfo
	modelsErr   error
	undoResult  report.Undo
	undoErr     error
	tools       []string
	// hunks is the review's change; a hunk id in conflicts refuses its
	// decisions; reviewErr answers every review.
	hunks     []report.Hunk
	conflicts map[string]bool
	reviewErr error
	decisions []string // "keep ID" or "revert ID", in order

	mu          sync.Mutex
	tasks       []string
	checks      []string
	undos       []string
	statusCalls int
	setModel    string
}

func newFake() *fakeRuntime {
	return &fakeRuntime{emitted: make(chan struct{}), cancelled: make(chan struct{})}
}

func (f *fakeRuntime) StartRun(ctx context.Context, task string, events func(progress.Event)) (*job.Job[report.Run], error) {
	return job.Start(&f.jobs, ctx, job.KindRun, func(ctx context.Context, _ *job.Job[report.Run]) (report.Run, string) {
		rep := f.Run(ctx, task, events)
		return rep, rep.Status
	}, func(p any) report.Run {
		return report.Run{Status: report.StatusError, Error: job.PanicMessage(job.KindRun, p)}
	})
}

func (f *fakeRuntime) StartCheck(ctx context.Context, name string, events func(progress.Event)) (*job.Job[report.CheckReport], error) {
	return job.Start(&f.jobs, ctx, job.KindCheck, func(ctx context.Context, _ *job.Job[report.CheckReport]) (report.CheckReport, string) {
		rep := f.Check(ctx, name, events)
		return rep, rep.Status
	}, func(p any) report.CheckReport {
		return report.CheckReport{Status: report.StatusError, Error: job.PanicMessage(job.KindCheck, p)}
	})
}

func (f *fakeRuntime) StartUndo(ctx context.Context, runID string) (*job.Job[report.Undo], error) {
	if f.jobs.Busy() == nil && f.undoErr != nil {
		f.mu.Lock()
		f.undos = append(f.undos, runID)
		f.mu.Unlock()
		return nil, f.undoErr
	}
	return job.Start(&f.jobs, ctx, job.KindUndo, func(ctx context.Context, _ *job.Job[report.Undo]) (report.Undo, string) {
		rep := f.Undo(ctx, runID)
		return rep, rep.Status
	}, func(p any) report.Undo {
		return report.Undo{Status: report.StatusError, Error: job.PanicMessage(job.KindUndo, p)}
	})
}

func (f *fakeRuntime) Wait(ctx context.Context) bool { return f.jobs.Wait(ctx) }
func (f *fakeRuntime) Busy() error                   { return f.jobs.Busy() }

func (f *fakeRuntime) Run(ctx context.Context, task string, events func(progress.Event)) report.Run {
	defer f.returned.Store(true)
	f.mu.Lock()
	f.tasks = append(f.tasks, task)
	first := len(f.tasks) == 1
	f.mu.Unlock()
	if events != nil {
		for _, e := range f.events {
			events(e)
		}
	}
	rep := f.report
	rep.Task = task
	if rep.Status == "" {
		rep.Status = report.StatusOK
	}
	if first {
		close(f.emitted)
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			if first {
				close(f.cancelled)
			}
			rep.Status, rep.Verified = report.StatusCancelled, false
		}
	}
	return rep
}

func (f *fakeRuntime) Check(ctx context.Context, name string, events func(progress.Event)) report.CheckReport {
	f.mu.Lock()
	f.checks = append(f.checks, name)
	f.mu.Unlock()
	if events != nil {
		for _, c := range f.checkReport.Checks {
			events(progress.Event{Kind: progress.CheckStart, Check: c.Name})
			events(progress.Event{Kind: progress.CheckEnd, Check: c.Name, Status: c.Status, DurationMS: c.DurationMS})
		}
	}
	return f.checkReport
}

func (f *fakeRuntime) Status(ctx context.Context) report.Status {
	f.mu.Lock()
	f.statusCalls++
	f.mu.Unlock()
	return f.status
}

func (f *fakeRuntime) Undo(ctx context.Context, runID string) report.Undo {
	f.mu.Lock()
	f.undos = append(f.undos, runID)
	f.mu.Unlock()
	return f.undoResult
}

func (f *fakeRuntime) Models(ctx context.Context) ([]model.ModelInfo, error) {
	return f.models, f.modelsErr
}

func (f *fakeRuntime) SetModel(name string) error {
	if err := f.jobs.Busy(); err != nil {
		return err
	}
	f.mu.Lock()
	f.setModel = name
	f.mu.Unlock()
	return nil
}

func (f *fakeRuntime) ToolNames() []string { return f.tools }

// calls returns copies of what the fake was asked to do.
func (f *fakeRuntime) calls() (tasks, checks, undos []string, statusCalls int, setModel string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tasks...), append([]string(nil), f.checks...),
		append([]string(nil), f.undos...), f.statusCalls, f.setModel
}

// Review answers with the scripted hunks, applying keep and revert by
// hunk id to their states, as the runtime's review would.
func (f *fakeRuntime) Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error) {
	if f.reviewErr != nil {
		return report.ReviewReport{}, f.reviewErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if runID == "" {
		runID = "run-1"
	}
	rep := report.ReviewReport{Status: report.StatusOK, RunID: runID}
	decide := func(ids []string, verb, state string) {
		for _, id := range ids {
			f.decisions = append(f.decisions, verb+" "+id)
			for i := range f.hunks {
				switch {
				case f.hunks[i].ID != id:
				case f.conflicts[id]:
					rep.Status = report.StatusConflict
					rep.Conflicts = append(rep.Conflicts, report.Conflict{Path: f.hunks[i].Path, Hunk: id, Reason: "its lines changed since the run"})
				default:
					f.hunks[i].State = state
				}
			}
		}
	}
	decide(keep, "keep", report.HunkKept)
	decide(revert, "revert", report.HunkReverted)
	rep.Hunks = append([]report.Hunk(nil), f.hunks...)
	rep.Review.Summary = fmt.Sprintf("%d decisions", len(f.decisions))
	return rep, nil
}

var _ Runtime = (*fakeRuntime)(nil)
