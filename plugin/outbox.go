package plugin

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/runtime/report"
)

// outbox pushes job payloads to Lua in order, from one goroutine, so that
// a slow editor never blocks a run: events queue up instead. Each push is
// bounded by the editor timeout; a push that fails is logged and dropped.
type outbox struct {
	v       *nvim.Nvim
	timeout time.Duration
	log     *slog.Logger

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []map[string]any
	closed bool
	done   chan struct{}
}

func newOutbox(v *nvim.Nvim, timeout time.Duration, log *slog.Logger) *outbox {
	o := &outbox{v: v, timeout: timeout, log: log, done: make(chan struct{})}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// push queues a payload.
func (o *outbox) push(p map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.queue = append(o.queue, p)
	o.cond.Signal()
}

// close stops the outbox once the queue is sent (or the connection is
// gone), waiting at most the timeout.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Signal()
	o.mu.Unlock()
	select {
	case <-o.done:
	case <-time.After(o.timeout):
	}
}

// run sends queued payloads until closed and drained.
func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		for len(o.queue) == 0 && !o.closed {
			o.cond.Wait()
		}
		if len(o.queue) == 0 {
			o.mu.Unlock()
			return
		}
		p := o.queue[0]
		o.queue = o.queue[1:]
		o.mu.Unlock()
		o.send(p)
	}
}

func (o *outbox) send(p map[string]any) {
	done := make(chan error, 1)
	go func() { done <- o.v.ExecLua(luaEvent, nil, p) }()
	select {
	case err := <-done:
		if err != nil {
			o.log.Warn("push to Neovim failed", "kind", p["kind"], "err", err)
		}
	case <-time.After(o.timeout):
		o.log.Warn("push to Neovim timed out", "kind", p["kind"])
	}
}

// wire converts a Go value (a report, an event) into the plain maps,
// slices and scalars msgpack carries, with the JSON field names: go-client
// would otherwise encode structs with their Go field names.
func wire(v any) any {
	data, err := report.Marshal(v)
	if err != nil {
		return map[string]any{"status": "error", "error": "unserialisable result: " + err.Error()}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]any{"status": "error", "error": "unserialisable result: " + err.Error()}
	}
	return out
}
