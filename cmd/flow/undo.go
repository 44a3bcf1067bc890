package main

import "context"

// cmdUndo implements `flow undo [RUN]`: restore what a run wrote (the
// workspace's last run by default), leaving files changed since untouched.
func cmdUndo(ctx context.Context, e *env) (any, string, error) {
	rt, err := openRuntime(e, true)
	if err != nil {
		return nil, "", err
	}
	defer rt.Close()
	runID := ""
	if len(e.opts.args) == 1 {
		runID = e.opts.args[0]
	}
	rep := rt.service(nil).Undo(ctx, runID)
	return rep, rep.Status, nil
}
