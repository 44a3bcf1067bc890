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
	// KindReview is a person's review decision (doc/design.md §12.7).
	KindReview = "review"
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
type Work[R any] func(ctx context.Context, j *Job[R]) (report R, status string)

// Handle is what a front end can do with a job of any kind: its id and
// kind, cancel it, wait for it and read its outcome untyped.
type Handle struct {
	// ID identifies the job within its [Gate] (1, 2, …).
	ID int64
	// Kind is "run", "check" or "undo".
	Kind string

	cancel  context.CancelFunc
	done    chan struct{}
	outcome func() (any, string)
	panic   any
}

// Cancel asks the job to stop at its next safe point; its report then says
// "cancelled". It does not wait.
func (h *Handle) Cancel() { h.cancel() }

// Done is closed when the job has returned and its result is set.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Outcome returns the job's report, untyped, and its status, for a front
// end that treats every kind of job alike; it blocks until Done.
func (h *Handle) Outcome() (report any, status string) {
	<-h.done
	return h.outcome()
}

// Panic returns what the job's work panicked with, or nil; it blocks until
// Done. The report is then the one the job's panic function made.
func (h *Handle) Panic() any {
	<-h.done
	return h.panic
}

// Job is one started run, check or undo whose report is an R.
type Job[R any] struct {
	*Handle
	report R
	status string
}

// Result returns the job's report and status; it blocks until Done.
func (j *Job[R]) Result() (report R, status string) {
	<-j.done
	return j.report, j.status
}

// Untyped returns j's handle; nil for a job that did not start.
func Untyped[R any](j *Job[R]) *Handle {
	if j == nil {
		return nil
	}
	return j.Handle
}

// Gate runs at most one job at a time. The zero Gate is ready to use.
type Gate struct {
	// Lock, when set, takes the workspace's cross-process lock for a job
	// about to start; it returns the release function, or an error (a lock
	// held by another process should be a *BusyError, or wrap one).
	Lock func() (release func(), err error)

	mu   sync.Mutex
	next int64
	cur  *Handle
	wg   sync.WaitGroup
}

// Start runs work as a job of kind in its own goroutine, with a context
// derived from ctx, and returns at once: the job, or a [*BusyError] when a
// job is in progress (here or in another process), or the lock's error.
// A panic of work is recovered here, the one place for every job: the
// job's report is then panicked's, made from what the work panicked with,
// with status "error", and the process goes on serving.
func Start[R any](g *Gate, ctx context.Context, kind string, work Work[R], panicked func(p any) R) (*Job[R], error) {
	g.mu.Lock()
	if c := g.cur; c != nil {
		g.mu.Unlock()
		return nil, &BusyError{Kind: c.Kind, ID: c.ID}
	}
	g.next++
	jctx, cancel := context.WithCancel(ctx)
	j := &Job[R]{Handle: &Handle{ID: g.next, Kind: kind, cancel: cancel, done: make(chan struct{})}}
	j.outcome = func() (any, string) { return j.report, j.status }
	g.cur = j.Handle
	g.mu.Unlock()

	release := func() {}
	if g.Lock != nil {
		r, err := g.Lock()
		if err != nil {
			g.free(j.Handle)
			cancel()
			return nil, err
		}
		release = r
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(j.done)
		defer g.free(j.Handle)
		defer release()
		defer cancel()
		defer func() {
			if p := recover(); p != nil {
				j.report, j.status, j.panic = panicked(p), "error", p
			}
		}()
		j.report, j.status = work(jctx, j)
	}()
	return j, nil
}

// free empties the slot held by j.
func (g *Gate) free(j *Handle) {
	g.mu.Lock()
	if g.cur == j {
		g.cur = nil
	}
	g.mu.Unlock()
}

// Current returns the job in progress, or nil.
func (g *Gate) Current() *Handle {
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

// PanicMessage is the error of a job of kind whose work panicked with p:
// "internal error in run: <panic>".
func PanicMessage(kind string, p any) string {
	return fmt.Sprintf("internal error in %s: %v", kind, p)
}
