package tui

import (
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/job"
)

// shownJob is the runtime job (run, check or undo) the log is following.
// The runtime's job system decides what may run; the TUI only shows it.
type shownJob struct {
	id         int64
	kind       string // "run", "check" or "undo"
	job        *job.Handle
	queue      *queue
	cancelling bool
	shown      shown     // what the log already shows of the job's results
	start      time.Time // when the job started
}

// shown records the details the log showed while a job ran, so that its
// summary does not repeat them.
type shown struct {
	diffs     map[string]bool // paths whose edit diff was shown
	checkTail bool            // a failing check's output was shown
}

// queue carries a job's events and final result from the job's goroutine to
// the program. push never blocks (the runtime calls it synchronously while
// it works), so the queue is unbounded; take blocks until something arrives
// or the queue is closed.
type queue struct {
	mu     sync.Mutex
	items  []tea.Msg
	closed bool
	ready  chan struct{} // holds one token while items or closed changed
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// push appends msg; it is a no-op after close.
func (q *queue) push(msg tea.Msg) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, msg)
	}
	q.mu.Unlock()
	q.signal()
}

// close marks the end of the job's messages.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns everything queued, waiting until there is something; ok is
// false once the queue is closed and empty.
func (q *queue) take() (items []tea.Msg, ok bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			items, q.items = q.items, nil
			q.mu.Unlock()
			return items, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.ready
	}
}

// jobMsg delivers a batch of a job's queued messages (agent events and, at
// the end, the job's result) to Update, in order.
type jobMsg struct {
	id    int64
	items []tea.Msg
}

// jobClosedMsg says the job's queue is drained and closed.
type jobClosedMsg struct{ id int64 }

// waitJob is the command that waits for the next batch of job id's queue.
func waitJob(id int64, q *queue) tea.Cmd {
	return func() tea.Msg {
		items, ok := q.take()
		if !ok {
			return jobClosedMsg{id: id}
		}
		return jobMsg{id: id, items: items}
	}
}

// jobFailedMsg is the result of a job whose work panicked.
type jobFailedMsg struct {
	kind string
	err  string
}

// forward pushes j's result to q once the job has returned, and closes q:
// result turns the report into its message; a panicking job becomes a
// jobFailedMsg rather than a crash with the terminal in raw mode.
func forward[R any](j *job.Job[R], q *queue, result func(report R) tea.Msg) {
	defer q.close()
	rep, _ := j.Result()
	if p := j.Panic(); p != nil {
		q.push(jobFailedMsg{kind: j.Kind, err: fmt.Sprintf("internal error: %v", p)})
		return
	}
	q.push(result(rep))
}
