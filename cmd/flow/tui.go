package main

import (
	"context"
	"fmt"

	"flow/cmd/flow/internal/tui"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/report"
)

// cmdTUI implements `flow` and `flow tui`: the terminal UI when stdin and
// stdout are terminals, otherwise a line mode with one JSON answer per line.
func cmdTUI(ctx context.Context, e *env) int {
	rt, err := openRuntime(e, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	defer rt.Close()
	cfg := rt.svc.Config()
	code := tui.Run(ctx, tuiRuntime{rt.svc}, tui.Options{
		Workspace: cfg.Workspace,
		Trusted:   cfg.Trusted,
		Models: report.Models{
			Planner:  cfg.ModelFor(config.RolePlanner),
			Coder:    cfg.ModelFor(config.RoleCoder),
			Reviewer: cfg.ModelFor(config.RoleReviewer),
		},
		IsTerminal: isTerminal(e.stdin) && isTerminal(e.stdout),
		Stderr:     e.stderr,
	}, e.stdin, e.stdout)
	if code == tui.ExitInterrupted {
		fmt.Fprintln(e.stderr, interruptedMessage)
	}
	return code
}

// tuiRuntime adapts the runtime service to tui.Runtime: the service already
// has every method but Undo, whose report the TUI renders through its JSON.
type tuiRuntime struct{ *agent.Service }

// Undo undoes runID ("" = the workspace's last run).
func (r tuiRuntime) Undo(ctx context.Context, runID string) (any, string, error) {
	rep := r.Service.Undo(ctx, runID)
	return rep, rep.Status, nil
}
