package agent

import (
	"time"

	"flow/runtime/progress"
)

// HeartbeatInterval is how often a model call that is still running emits
// an [progress.ModelWait]: on a CPU one call can take minutes, and front ends
// (MCP hosts' idle watchdogs, people) need to see that the run is alive.
var HeartbeatInterval = 10 * time.Second

// heartbeat emits progress.ModelWait for role's turn every HeartbeatInterval
// until the returned stop is called; stop returns once no more can come.
func (r *env) heartbeat(role string, turn int) (stop func()) {
	if r.events == nil {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(exited)
		tick := time.NewTicker(HeartbeatInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				r.emit(progress.Event{Kind: progress.ModelWait, Role: role, Turn: turn, DurationMS: now.Sub(start).Milliseconds()})
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
