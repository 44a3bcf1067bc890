package main

import (
	"context"
	"fmt"

	"flow/cmd/flow/internal/tui"
	"flow/runtime/agent"
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
	svc := rt.service(nil)
	cfg := svc.Config()
	code := tui.Run(ctx, svc, tui.Options{
		Workspace:  cfg.Workspace,
		Trusted:    cfg.Trusted,
		Models:     agent.ModelsOf(&cfg),
		IsTerminal: isTerminal(e.stdin) && isTerminal(e.stdout),
		Stderr:     e.stderr,
	}, e.stdin, e.stdout)
	if code == tui.ExitInterrupted {
		fmt.Fprintln(e.stderr, interruptedMessage)
	}
	return code
}

var _ tui.Runtime = (*agent.Service)(nil)
