package main

import (
	"context"

	"flow/runtime/report"
)

// cmdStatus implements `flow status`: the effective configuration, the
// workspace's state, its last run and flow serve's tasks (the running one
// and the last few, see `flow tasks`). It never contacts the model.
func cmdStatus(ctx context.Context, e *env) (any, string, error) {
	rt, err := openRuntime(e, false)
	if err != nil {
		return nil, "", err
	}
	defer rt.Close()
	st := rt.service(nil).Status(ctx)
	return statusReport{Status: st.Normalize(), Tasks: recentTasks(rt)}, st.Status, nil
}

// statusReport is the status report with the workspace's tasks.
type statusReport struct {
	report.Status
	Tasks *statusTasks `json:"tasks,omitempty"`
}

// statusTasks are the tasks `flow status` shows.
type statusTasks struct {
	Running *taskLine  `json:"running,omitempty"`
	Recent  []taskLine `json:"recent"`
}

// maxStatusTasks is how many recent tasks `flow status` shows.
const maxStatusTasks = 3

// recentTasks reads the running task and the last few; nil when there are
// none or the records cannot be read (`flow tasks` says why).
func recentTasks(rt *workspaceRuntime) *statusTasks {
	if rt.store == nil {
		return nil
	}
	tasks, err := rt.store.Tasks()
	if err != nil {
		return nil
	}
	page, _, err := tasks.List("", maxListedTasks)
	if err != nil || len(page) == 0 {
		return nil
	}
	out := &statusTasks{Recent: []taskLine{}}
	for i, t := range page {
		line := taskLineOf(t)
		if !t.Terminal() && out.Running == nil {
			out.Running = &line
		}
		if i < maxStatusTasks {
			out.Recent = append(out.Recent, line)
		}
	}
	return out
}
