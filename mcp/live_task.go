package mcp

import (
	"sync"
	"sync/atomic"
	"time"

	"flow/runtime/journal"
)

// A task's job as this process sees it: a job it runs itself (a plain call,
// or a task of a server without workers), whose record it writes, or a job
// a worker process it started runs (doc/design.md §10.10), whose events it
// relays while the worker writes the record.

// recordInterval bounds how often a running task's latest event is written
// to its record (its first run id is written at once).
const recordInterval = 2 * time.Second

// liveTask is a task whose job this process runs or watches: in this
// process, or in a worker process this server started (doc/design.md
// §10.10), whose events it relays and whose record the worker writes.
type liveTask struct {
	tool      string
	progress  func(string)  // the call's progress notifications
	worker    bool          // the job runs in a worker, which writes the record
	cancelled atomic.Bool   // tasks/cancel named it
	done      chan struct{} // closed once the final record is written

	mu      sync.Mutex
	cancel  func() // stops the job: cancels it here, signals a worker; nil until it started
	store   *journal.Tasks
	id      string
	runID   string
	message string
	written time.Time
	pending *time.Timer // a flush of the latest event, due at written+recordInterval
}

// event receives one runtime event line: it goes to the call's progress and
// becomes the task's status message. The record gets a new run id at once
// and the latest message at most every recordInterval, the last one of a
// burst included (a long model call follows it).
func (lt *liveTask) event(runID, message string) {
	if message != "" {
		lt.progress(message)
	}
	lt.mu.Lock()
	newRun := runID != "" && lt.runID == ""
	if runID != "" {
		lt.runID = runID
	}
	if message != "" {
		lt.message = message
	}
	record := lt.id != "" && !lt.worker
	since := time.Since(lt.written)
	flush := record && (newRun || since >= recordInterval)
	if flush {
		lt.written = time.Now()
	} else if record && lt.pending == nil {
		lt.pending = time.AfterFunc(recordInterval-since, lt.flush)
	}
	lt.mu.Unlock()
	if flush {
		lt.flush()
	}
}

// flush writes the latest run id and message to the record.
func (lt *liveTask) flush() {
	lt.mu.Lock()
	if lt.pending != nil {
		lt.pending.Stop()
		lt.pending = nil
	}
	lt.written = time.Now()
	store, id, rid, msg := lt.store, lt.id, lt.runID, lt.message
	lt.mu.Unlock()
	_, _ = store.Update(id, func(t *journal.Task) { t.RunID, t.Message = rid, msg })
}

// stopFlushing cancels a pending flush: the final record follows.
func (lt *liveTask) stopFlushing() {
	lt.mu.Lock()
	if lt.pending != nil {
		lt.pending.Stop()
		lt.pending = nil
	}
	lt.mu.Unlock()
}

// started gives lt the function that stops its job, which started after
// its record was written; a tasks/cancel that came in between stops it at
// once.
func (lt *liveTask) started(cancel func()) {
	lt.mu.Lock()
	lt.cancel = cancel
	lt.mu.Unlock()
	if lt.cancelled.Load() {
		cancel()
	}
}

// stop marks lt cancelled by its requestor and stops its job, or, when the
// job has not started yet, has [liveTask.started] stop it.
func (lt *liveTask) stop() {
	lt.cancelled.Store(true)
	lt.mu.Lock()
	cancel := lt.cancel
	lt.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// snapshot returns the live run id and message.
func (lt *liveTask) snapshot() (runID, message string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.runID, lt.message
}
