package agent

import (
	"fmt"

	"flow/runtime/model"
)

// beforeTurnRule is a rule of the before-turn slot of the role loop
// (doc/design.md §6.6): a per-turn choice about the next request, with its
// own state. prepare may change the request and returns the note the
// call's event carries ("" for none); learn sees how each turn went. The
// rules live as long as the run, so what one learns in a coder invocation
// holds in the next cycle's. They see the turn through turnView alone,
// which keeps this file at the bottom of the package.
type beforeTurnRule interface {
	prepare(v turnView, req *model.Request) (note string)
	learn(v turnView, calls int, wrote bool)
}

// turnView is what a before-turn rule knows of the invocation: its role's
// retry temperature (policy.retry) and whether the host knows the task is
// unfinished (env.unfinished).
type turnView struct {
	retry      float64
	unfinished bool
}

// newBeforeTurnRules makes a run's before-turn rules, in the order they
// prepare a request.
func newBeforeTurnRules() []beforeTurnRule {
	return []beforeTurnRule{&retryTemperature{}}
}

// retryTemperature samples a role's next request at its retry temperature
// (agent.retry_temperature) after a reply that changed no file and called
// no tool, while the host knows the task is unfinished: a small model
// asked the same thing at the same temperature answers the same nothing.
type retryTemperature struct {
	// idle: the last turn of a role with a retry temperature changed no
	// file and called no tool.
	idle bool
}

func (r *retryTemperature) prepare(v turnView, req *model.Request) string {
	if v.retry <= 0 || !r.idle || !v.unfinished {
		return ""
	}
	t := v.retry
	req.Temperature = &t
	return fmt.Sprintf("temperature %g: the last reply changed nothing", t)
}

func (r *retryTemperature) learn(v turnView, calls int, wrote bool) {
	if v.retry > 0 {
		r.idle = calls == 0 && !wrote
	}
}
