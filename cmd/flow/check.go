package main

import "context"

// cmdCheck implements `flow check [NAME]`: run the configured checks (or
// one, treated as required) and report whether they verify the workspace.
func cmdCheck(ctx context.Context, e *env) (any, string, error) {
	svc, closeAll, err := openService(e)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	name := e.opts.name
	if name == "" && len(e.opts.args) == 1 {
		name = e.opts.args[0]
	}
	rep := svc.Check(ctx, name, progressSink(e))
	return rep, rep.Status, nil
}
