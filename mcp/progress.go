package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"flow/internal/text"
)

// jobCall is the state of one running flow_run or flow_check call, shared
// by the frame loop (cancellation) and the job's progress callback: its
// progress notifications (doc/design.md §10.7) and what cancels it.
type jobCall struct {
	id    json.RawMessage
	key   string // idKey(id)
	tool  string
	token json.RawMessage // progressToken, nil when the client sent none
	out   *wire
	stop  context.CancelFunc

	cancelled atomic.Bool // notifications/cancelled named this call

	mu   sync.Mutex
	sent int       // progress notifications written
	done bool      // the handler has its report: no more progress
	last string    // the latest progress message
	at   time.Time // when it was written
	from time.Time // when last was first written (heartbeats repeat it)
}

// maxProgressBytes bounds one progress message.
const maxProgressBytes = 4096

// progressParams are the params of notifications/progress.
type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      int             `json:"progress"`
	Message       string          `json:"message,omitempty"`
}

// progress writes one notifications/progress for message, synchronously, so
// that it is on the wire before the handler can return. Nothing is written
// without a progress token, after [jobCall.finish] or after the call was
// cancelled. A nil call ignores progress.
func (c *jobCall) progress(message string) {
	if c == nil || c.token == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.cancelled.Load() {
		return
	}
	c.sent++
	c.last, c.at, c.from = message, time.Now(), time.Now()
	_ = c.out.notify("notifications/progress", progressParams{
		ProgressToken: c.token,
		Progress:      c.sent,
		Message:       text.ClipBytes(message, maxProgressBytes),
	})
}

// heartbeat writes a progress notification every period of silence until
// done is closed: the latest step and how long it has lasted.
func (c *jobCall) heartbeat(period time.Duration, done <-chan struct{}) {
	if c == nil || c.token == nil {
		return
	}
	tick := time.NewTicker(period / 2)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if !c.beat(now, start, period) {
				return
			}
		}
	}
}

// beat writes one heartbeat at now when the call has been silent for half
// a period; it reports false once the call needs no more of them.
func (c *jobCall) beat(now, start time.Time, period time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.cancelled.Load() {
		return false
	}
	if now.Sub(c.at) < period/2 {
		return true
	}
	since := c.from
	if since.IsZero() {
		since = start
	}
	step := c.last
	if step == "" {
		step = c.tool + " starting"
	}
	c.sent++
	c.at = now
	_ = c.out.notify("notifications/progress", progressParams{
		ProgressToken: c.token,
		Progress:      c.sent,
		Message:       text.ClipBytes(fmt.Sprintf("%s — still working, %d s", step, int(now.Sub(since).Seconds())), maxProgressBytes),
	})
	return true
}

// finish ends progress: a progress write in flight completes first, later
// calls are dropped, so the result follows every notification.
func (c *jobCall) finish() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}
