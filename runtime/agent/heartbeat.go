package agent

import "time"

// EventModelWait is the heartbeat of a long model call: emitted every
// [HeartbeatInterval] while it runs, DurationMS since it started.
const EventModelWait EventKind = "model_wait"

// HeartbeatInterval is how often a model call that is still running emits
// an [EventModelWait]: on a CPU one call can take minutes, and front ends
// (MCP hosts' idle watchdogs, people) need to see that the run is alive.
var HeartbeatInterval = 10 * time.Second

// heartbeat emits EventModelWait for role's turn every HeartbeatInterval
// until the returned stop is called; stop returns once no more can come.
func (r *run) heartbeat(role string, turn int) (stop func()) {
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
				r.emit(Event{Kind: EventModelWait, Role: role, Turn: turn, DurationMS: now.Sub(start).Milliseconds()})
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
