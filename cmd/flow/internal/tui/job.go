package tui

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/agent"
)

// job is the run, check or undo in progress. Only one runs at a time.
type job struct {
	id         int
	kind       string // "run", "check" or "undo"
	cancel     context.CancelFunc
	queue      *queue
	cancelling bool
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
	id    int
	items []tea.Msg
}

// jobClosedMsg says the job's queue is drained and closed.
type jobClosedMsg struct{ id int }

// waitJob is the command that waits for the next batch of job id's queue.
func waitJob(id int, q *queue) tea.Cmd {
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

// tracker counts the job goroutines so that Run can wait for them after the
// program has ended.
type tracker struct{ wg sync.WaitGroup }

// start runs work in a new goroutine. work's result and the events it emits
// are pushed to q, which is closed when work returns; a panic becomes a
// jobFailedMsg rather than a crash with the terminal in raw mode.
func (t *tracker) start(ctx context.Context, kind string, q *queue, work func(ctx context.Context, emit func(agent.Event)) tea.Msg) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer q.close()
		defer func() {
			if p := recover(); p != nil {
				q.push(jobFailedMsg{kind: kind, err: fmt.Sprintf("internal error: %v", p)})
			}
		}()
		q.push(work(ctx, func(e agent.Event) { q.push(e) }))
	}()
}

// wait waits for every job goroutine to return, at most d; it reports
// whether they all did.
func (t *tracker) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}
