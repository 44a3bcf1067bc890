package main

import (
	"context"

	"flow/runtime/journal"
	"flow/runtime/report"
)

// cmdStatus implements `flow status`: the effective configuration, the
// workspace's state, its last run and flow serve's tasks (the running one
// and the last few, see `flow tasks`). It never contacts the model.
func cmdStatus(ctx context.Context, e *env) (any, string, error) {
	rt, svc, closeAll, err := openServiceRuntime(e)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	st := svc.Status(ctx)
	return statusReport{Status: st.Normalize(), Tasks: recentTasks(rt.store)}, st.Status, nil
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
func recentTasks(store *journal.Store) *statusTasks {
	if store == nil {
		return nil
	}
	tasks, err := store.Tasks()
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
