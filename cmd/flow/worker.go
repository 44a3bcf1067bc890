package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	flowmcp "flow/mcp"
	"flow/runtime/journal"
)

// workerFD is the worker's pipe to the server that started it.
const workerFD = 3

// cmdTaskWorker implements the hidden `flow task-worker`: the process of
// its own in which `flow serve` runs one task-augmented flow_run or
// flow_check (doc/design.md §10.10), so that the task outlives the server
// and its client. flow serve starts it in a session of its own, with the
// server's configuration flags, the call on stdin, its stderr in the
// task's log and fd 3 a pipe for the handshake and progress; it is not a
// command to run by hand. SIGUSR1 cancels the task (tasks/cancel); SIGTERM,
// SIGINT and SIGHUP interrupt it. Exit 0 once the task's result is
// recorded, 1 when nothing could be recorded, 2 without fd 3.
func cmdTaskWorker(_ context.Context, e *env) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, journal.CancelSignal, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// flow serve hands the worker a pipe as fd 3; run by hand, fd 3 is
	// closed or one of the Go runtime's own descriptors.
	var st unix.Stat_t
	if err := unix.Fstat(workerFD, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		fmt.Fprintln(e.stderr, "flow: task-worker runs a task for flow serve, which starts it; it is not a command to run by hand")
		return exitUsage
	}
	events := os.NewFile(workerFD, "task-events")
	defer events.Close()
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "flow: task-worker: %s\n", err)
		flowmcp.WorkerStartFailed(events, err)
		return exitNotOK
	}
	rt, logger, closeAll, err := openServer(e)
	if err != nil {
		return fail(err)
	}
	defer closeAll()
	env, closeEditor, err := rt.attachEditor(e, logger)
	if err != nil {
		return fail(err)
	}
	defer closeEditor()
	if rt.store == nil {
		return fail(errors.New("the workspace's state directory cannot be opened, so the task cannot be recorded"))
	}
	tasks, err := rt.store.Tasks()
	if err != nil {
		return fail(err)
	}
	svc := rt.service(env)
	err = flowmcp.RunWorker(serviceRuntime{svc}, flowmcp.Options{Version: flowVersion(), Logger: logger, Tasks: tasks},
		flowmcp.WorkerIO{Request: e.stdin, Events: events, Signals: sigs})
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: task-worker: %s\n", err)
		return exitNotOK
	}
	return exitOK
}

// workerCommand returns the function that makes the command of a task
// worker for flow serve: this binary, `task-worker`, and the flags that
// make it open the same configuration, workspace and editor. The worker
// inherits the server's environment and working directory, so a relative
// --config or --workspace means the same there.
func workerCommand(o *options) (func() *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the flow binary for task workers: %w", err)
	}
	args := workerArgs(o)
	return func() *exec.Cmd { return exec.Command(exe, args...) }, nil
}

// workerArgs are the arguments of a task worker for a server started with
// o: every flag that shapes the runtime, none of the output flags.
func workerArgs(o *options) []string {
	args := []string{"task-worker"}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, flag, value)
		}
	}
	add("--config", o.configFile)
	add("--workspace", o.workspace)
	if o.modelSet {
		args = append(args, "--model", o.model)
	}
	if o.trusted {
		args = append(args, "--trusted")
	}
	if o.behaviourPreserving {
		args = append(args, "--behaviour-preserving")
	}
	if o.nvim != "" {
		add("--nvim", o.nvim)
		add("--editor-timeout", strconv.FormatFloat(o.editorTimeout, 'f', -1, 64))
		add("--editor-module", o.editorModule)
	}
	return args
}
