package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"flow/runtime/agent"
)

// cmdRun implements `flow run TASK...`: one run, one JSON report. Progress
// goes to stderr when it is a terminal (unless --quiet).
func cmdRun(ctx context.Context, e *env) (any, string, error) {
	svc, closeAll, err := openService(e)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	task := strings.Join(e.opts.args, " ")
	rep := svc.Run(ctx, task, progressSink(e))
	if ctx.Err() != nil && len(rep.ChangedFiles) > 0 {
		fmt.Fprintf(e.stderr, "flow: edits written before the interrupt (run %s):\n", rep.RunID)
		for _, f := range rep.ChangedFiles {
			fmt.Fprintf(e.stderr, "  %s\n", f)
		}
	}
	return rep, rep.Status, nil
}

// progressSink returns the event printer for stderr, or nil when stderr is
// not a terminal or --quiet was given.
func progressSink(e *env) func(agent.Event) {
	if e.opts.quiet || !isTerminal(e.stderr) {
		return nil
	}
	return func(ev agent.Event) {
		if s := ev.String(); s != "" {
			fmt.Fprintln(e.stderr, s)
		}
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
