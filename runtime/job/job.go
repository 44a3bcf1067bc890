package job

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Kinds of job. They name the holder in a [BusyError].
const (
	KindRun   = "run"
	KindCheck = "check"
	KindUndo  = "undo"
)

// ErrBusy is matched (errors.Is) by every [*BusyError].
var ErrBusy = errors.New("busy")

// BusyError is the refusal to start a job while another one holds the
// workspace: a job of this process (Kind and ID set) or another flow
// process holding the workspace lock (PID set, or neither when the pid
// could not be read).
type BusyError struct {
	// Kind is the running job's kind ("run", "check", "undo"); "" when
	// another process holds the workspace.
	Kind string
	// ID is the running job's id in this process; 0 for another process.
	ID int64
	// PID is the process holding the workspace lock, 0 when it is this
	// process or unknown.
	PID int
	// Err is the underlying lock error of another process, if any.
	Err error
}

// Error is the one sentence flow says when it is busy, in every front end:
// "busy: a run is already in progress in this flow process; wait for it to
// finish or stop it".
func (e *BusyError) Error() string {
	kind, where := e.Kind, "this flow process"
	if kind == "" {
		kind = "job"
	}
	switch {
	case e.PID > 0:
		where = fmt.Sprintf("flow process %d", e.PID)
	case e.ID == 0:
		where = "another flow process"
	}
	return fmt.Sprintf("busy: a %s is already in progress in %s; wait for it to finish or stop it", kind, where)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Unwrap returns the lock error of another process.
func (e *BusyError) Unwrap() error { return e.Err }

// Work is what job j does. It returns the job's report and the report's
// status; it must return soon after ctx is cancelled. j lets the work tag
// what it emits with the job's id before Start has returned it.
type Work func(ctx context.Context, j *Job) (report any, status string)

// Job is one started run, check or undo.
type Job struct {
	// ID identifies the job within its [Gate] (1, 2, …).
	ID int64
	// Kind is "run", "check" or "undo".
	Kind string

	cancel context.CancelFunc
	done   chan struct{}
	report any
	status string
	panic  any
}

// Cancel asks the job to stop at its next safe point; its report then says
// "cancelled". It does not wait.
func (j *Job) Cancel() { j.cancel() }

// Done is closed when the job has returned and its result is set.
func (j *Job) Done() <-chan struct{} { return j.done }

// Result returns the job's report and status; it blocks until Done.
func (j *Job) Result() (report any, status string) {
	<-j.done
	return j.report, j.status
}

// Panic returns what the job's work panicked with, or nil; it blocks until
// Done. The result is then [Panicked]'s report.
func (j *Job) Panic() any {
	<-j.done
	return j.panic
}

// Gate runs at most one job at a time. The zero Gate is ready to use.
type Gate struct {
	// Lock, when set, takes the workspace's cross-process lock for a job
	// about to start; it returns the release function, or an error (a lock
	// held by another process should be a *BusyError, or wrap one).
	Lock func() (release func(), err error)

	mu   sync.Mutex
	next int64
	cur  *Job
	wg   sync.WaitGroup
}

// Start runs work as a job of kind in its own goroutine, with a context
// derived from ctx, and returns at once: the job, or a [*BusyError] when a
// job is in progress (here or in another process), or the lock's error.
func (g *Gate) Start(ctx context.Context, kind string, work Work) (*Job, error) {
	g.mu.Lock()
	if c := g.cur; c != nil {
		g.mu.Unlock()
		return nil, &BusyError{Kind: c.Kind, ID: c.ID}
	}
	g.next++
	jctx, cancel := context.WithCancel(ctx)
	j := &Job{ID: g.next, Kind: kind, cancel: cancel, done: make(chan struct{})}
	g.cur = j
	g.mu.Unlock()

	release := func() {}
	if g.Lock != nil {
		r, err := g.Lock()
		if err != nil {
			g.free(j)
			cancel()
			return nil, err
		}
		release = r
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(j.done)
		defer g.free(j)
		defer release()
		defer cancel()
		defer func() {
			if p := recover(); p != nil {
				j.report, j.status, j.panic = Panicked(kind, p), "error", p
			}
		}()
		j.report, j.status = work(jctx, j)
	}()
	return j, nil
}

// free empties the slot held by j.
func (g *Gate) free(j *Job) {
	g.mu.Lock()
	if g.cur == j {
		g.cur = nil
	}
	g.mu.Unlock()
}

// Current returns the job in progress, or nil.
func (g *Gate) Current() *Job {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}

// Busy returns the [*BusyError] a Start would return now because of a job
// of this process, or nil when none is in progress.
func (g *Gate) Busy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil {
		return nil
	}
	return &BusyError{Kind: g.cur.Kind, ID: g.cur.ID}
}

// CancelAll cancels every job in progress (:FlowStop, shutdown) and
// returns how many there were. It does not wait: see [Gate.Wait].
func (g *Gate) CancelAll() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil {
		return 0
	}
	g.cur.cancel()
	return 1
}

// Wait waits until every started job has returned, or ctx ends; it reports
// whether they all returned.
func (g *Gate) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Panicked is the report of a job whose work panicked: status "error" and
// "internal error in <kind>: <panic>". The process keeps serving.
func Panicked(kind string, p any) map[string]any {
	return map[string]any{"status": "error", "error": fmt.Sprintf("internal error in %s: %v", kind, p)}
}
