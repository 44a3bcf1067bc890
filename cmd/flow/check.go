package main

import (
	"context"

	"flow/runtime/check"
)

// cmdCheck implements `flow check [NAME]`: run the configured checks (or
// one, treated as required) and report whether they verify the workspace.
func cmdCheck(ctx context.Context, e *env) (any, string, error) {
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, "", err
	}
	disk, err := openWorkspace(cfg)
	if err != nil {
		return nil, "", err
	}
	defer disk.Close()
	name := e.opts.name
	if name == "" && len(e.opts.args) == 1 {
		name = e.opts.args[0]
	}
	r := &check.Runner{Root: cfg.Workspace, Trusted: cfg.Trusted, Checks: cfg.Checks, Fresh: disk.CheckRoot}
	rep := r.Run(ctx, name)
	return rep, rep.Status, nil
}
