package tui

import (
	"context"
	"sync"
	"sync/atomic"

	"flow/runtime/agent"
	"flow/runtime/model"
	"flow/runtime/report"
)

// fakeRuntime is a hand-written Runtime. Run emits the scripted events and
// returns the scripted report; with a gate it then waits for the gate or
// for ctx's cancellation, and reports "cancelled" in the latter case.
type fakeRuntime struct {
	events []agent.Event
	report report.Run

	gate      chan struct{} // non-nil: Run waits on it after emitting
	emitted   chan struct{} // closed when Run has emitted its events
	cancelled chan struct{} // closed when Run observed ctx.Done()
	returned  atomic.Bool   // set just before Run returns

	checkReport report.CheckReport
	status      report.Status
	models      []model.ModelInfo
	modelsErr   error
	undoResult  any
	undoStatus  string
	undoErr     error
	tools       []string

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

func (f *fakeRuntime) Run(ctx context.Context, task string, events func(agent.Event)) report.Run {
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

func (f *fakeRuntime) Check(ctx context.Context, name string, events func(agent.Event)) report.CheckReport {
	f.mu.Lock()
	f.checks = append(f.checks, name)
	f.mu.Unlock()
	if events != nil {
		for _, c := range f.checkReport.Checks {
			events(agent.Event{Kind: agent.EventCheckStart, Check: c.Name})
			events(agent.Event{Kind: agent.EventCheckEnd, Check: c.Name, Status: c.Status, DurationMS: c.DurationMS})
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

func (f *fakeRuntime) Undo(ctx context.Context, runID string) (any, string, error) {
	f.mu.Lock()
	f.undos = append(f.undos, runID)
	f.mu.Unlock()
	return f.undoResult, f.undoStatus, f.undoErr
}

func (f *fakeRuntime) Models(ctx context.Context) ([]model.ModelInfo, error) {
	return f.models, f.modelsErr
}

func (f *fakeRuntime) SetModel(name string) {
	f.mu.Lock()
	f.setModel = name
	f.mu.Unlock()
}

func (f *fakeRuntime) ToolNames() []string { return f.tools }

// calls returns copies of what the fake was asked to do.
func (f *fakeRuntime) calls() (tasks, checks, undos []string, statusCalls int, setModel string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tasks...), append([]string(nil), f.checks...),
		append([]string(nil), f.undos...), f.statusCalls, f.setModel
}

var _ Runtime = (*fakeRuntime)(nil)
