package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	flowmcp "flow/mcp"
	"flow/runtime/agent"
	"flow/runtime/job"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// cmdServe implements `flow serve`, the MCP stdio server (doc/design.md §10). stdout
// carries protocol lines only. Diagnostics go to $FLOW_LOG_FILE (debug level)
// when it is set, else warnings and errors go to stderr, so a normal session
// writes nothing there. Exit codes: 0 at end of input (once a running call
// has finished) or after an oversized frame; 130 when SIGINT or SIGTERM
// arrives before that, also after the end of input — the running check's
// processes are killed first, through the cancelled context, and nothing
// more is written on stdout; 2 for a configuration error; 1 for an input
// error.
func cmdServe(ctx context.Context, e *env) int {
	rt, logger, closeAll, err := openServer(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	defer closeAll()
	env, closeEditor, err := rt.attachEditor(e, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	defer closeEditor()
	svc := rt.service(env)
	opts := flowmcp.Options{Version: flowVersion(), Logger: logger}
	if rt.store != nil {
		// Without the task store flow serve still serves, without MCP
		// tasks, wait_seconds and flow_status {run_id}.
		if opts.Tasks, err = rt.store.Tasks(); err != nil {
			logger.Warn("task store unavailable: MCP tasks are off", "error", err.Error())
		}
	}
	// A task runs in a worker process of its own, which outlives this
	// server (doc/design.md §10.10); without the binary's path, in here.
	if opts.Worker, err = workerCommand(e.opts); err != nil {
		logger.Warn("task workers unavailable: tasks end with this server", "error", err.Error())
	}
	if e.opts.nvim != "" {
		// Attaching to the editor may take the whole editor timeout.
		opts.WorkerStartTimeout = editorTimeout(e) + 30*time.Second
	}
	srv := flowmcp.NewServer(serviceRuntime{svc}, opts)
	err = srv.Serve(ctx, e.stdin, e.stdout)
	if ctx.Err() != nil {
		fmt.Fprintln(e.stderr, interruptedMessage)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: serve: %s\n", err)
		return exitNotOK
	}
	return exitOK
}

// openServer opens the runtime and the log of a long-running front end
// (serve, nvim); closeAll releases both.
func openServer(e *env) (rt *workspaceRuntime, logger *slog.Logger, closeAll func(), err error) {
	if rt, err = openRuntime(e, false); err != nil {
		return nil, nil, nil, err
	}
	logger, closeLog, err := serveLogger(e)
	if err != nil {
		rt.Close()
		return nil, nil, nil, err
	}
	return rt, logger, func() { closeLog(); rt.Close() }, nil
}

// serveLogger returns the server's logger and a function that closes it.
func serveLogger(e *env) (*slog.Logger, func(), error) {
	path := e.getenv("FLOW_LOG_FILE")
	if path == "" {
		h := slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
		return slog.New(h), func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open log file %s: %w", path, err)
	}
	h := slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(h), func() { f.Close() }, nil
}

// serviceRuntime is the runtime service as the MCP server sees it: runtime
// events become progress lines.
type serviceRuntime struct{ svc *agent.Service }

var _ flowmcp.Runtime = serviceRuntime{}

func (r serviceRuntime) StartRun(ctx context.Context, task string, notify func(runID, message string)) (*job.Job[report.Run], error) {
	return r.svc.StartRun(ctx, task, func(ev progress.Event) {
		if s := progress.Line(ev); s != "" || ev.RunID != "" {
			notify(ev.RunID, s)
		}
	})
}

func (r serviceRuntime) StartCheck(ctx context.Context, name string) (*job.Job[report.CheckReport], error) {
	return r.svc.StartCheck(ctx, name, nil)
}

func (r serviceRuntime) Status(ctx context.Context) report.Status {
	return r.svc.Status(ctx)
}

func (r serviceRuntime) Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error) {
	return r.svc.Review(ctx, runID, keep, revert)
}
