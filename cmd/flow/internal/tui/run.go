// Package tui is flow's terminal front end (doc/design.md §13): a Bubble Tea program
// with a header (workspace, trust, models), a scrolling log that shows each
// run live and an input line with history, plus a line mode for when stdin
// or stdout is not a terminal, which answers every input line with exactly
// one JSON object.
//
// The package talks to the runtime only through the [Runtime] interface, so
// it depends on nothing in flow but the event, report and model types.
package tui

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/agent"
	"flow/runtime/job"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// Exit codes returned by [Run] (doc/design.md §1.1).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitInterrupted = 130
)

// ErrUndoUnavailable is what StartUndo of a [Runtime] without a write
// journal returns (directly or wrapped); the TUI then says that undo is
// unavailable until the journal exists.
var ErrUndoUnavailable = agent.ErrUndoUnavailable

// Runtime is what the TUI needs from flow's runtime; *agent.Service
// implements it. Runs, checks and undos are jobs of the runtime's one job
// system: a Start method returns the job at once, or an error matching
// job.ErrBusy, whose text the TUI shows as it is. Status, Models and
// ToolNames may be called while a job is in progress.
type Runtime interface {
	// StartRun starts task; events, when non-nil, receives progress events
	// synchronously (the TUI's sink never blocks). The result is a
	// report.Run.
	StartRun(ctx context.Context, task string, events func(progress.Event)) (*job.Job[report.Run], error)
	// StartCheck starts the named check (every check when name is "");
	// events receives check_start and check_end. The result is a
	// report.CheckReport.
	StartCheck(ctx context.Context, name string, events func(progress.Event)) (*job.Job[report.CheckReport], error)
	// StartUndo starts the undo of run runID (the workspace's last run when
	// ""); the result is a report.Undo. An error matching
	// ErrUndoUnavailable means there is no journal.
	StartUndo(ctx context.Context, runID string) (*job.Job[report.Undo], error)
	// Review lists run runID's hunks ("" for the last run) and keeps or
	// reverts the selected ones (a hunk id, a changed file's path or
	// "all"); a review that cannot be made as asked is an error.
	Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error)
	// Wait waits until every job has returned or ctx ends.
	Wait(ctx context.Context) bool
	// Busy returns the busy error while a job is in progress, else nil.
	Busy() error
	// Status reports the configuration and the workspace's state.
	Status(ctx context.Context) report.Status
	// Models lists the installed models (Ollama /api/tags).
	Models(ctx context.Context) ([]model.ModelInfo, error)
	// SetModel makes every role use the model name; it is refused (a busy
	// error) while a job is in progress.
	SetModel(name string) error
	// ToolNames lists the tools the coder is offered.
	ToolNames() []string
}

// Options configure [Run].
type Options struct {
	// Workspace is the workspace directory shown in the header.
	Workspace string
	// Trusted is whether edits and checks are enabled (--trusted).
	Trusted bool
	// Models are the effective model of every role, for the header.
	Models report.Models
	// IsTerminal selects the interactive program; the caller decides it
	// from stdin and stdout. When false, Run uses the JSON line mode.
	IsTerminal bool
	// Stderr, when set, receives a one-line message if the terminal
	// program cannot start or fails.
	Stderr io.Writer
}

// shutdownWait bounds how long Run waits, after the program has ended, for
// a cancelled run or check to return (so that running checks' process
// groups are killed before flow exits).
const shutdownWait = 30 * time.Second

// Run runs the terminal UI (or the line mode when opts.IsTerminal is false)
// until the user quits, input ends or ctx is cancelled, and returns the exit
// code: 0 after /quit, /exit, Ctrl-D or end of input; 130 when ctx was
// cancelled (SIGINT/SIGTERM in main), after the running task, if any, was
// cancelled and has returned; 1 when the terminal program failed.
func Run(ctx context.Context, rt Runtime, opts Options, in io.Reader, out io.Writer) int {
	if !opts.IsTerminal {
		return runLines(ctx, rt, in, out)
	}
	base, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newModel(base, rt, opts)
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(out),
		// main's signal context is the only signal handling: SIGINT and
		// SIGTERM cancel ctx, which ends the program through WithContext.
		tea.WithoutSignalHandler(),
	)
	_, err := p.Run()
	// Whatever ended the program, stop the job in progress and wait for it
	// to return; the terminal has already been restored.
	cancel()
	wctx, stop := context.WithTimeout(context.Background(), shutdownWait)
	rt.Wait(wctx)
	stop()
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	if err != nil {
		if opts.Stderr != nil {
			fmt.Fprintf(opts.Stderr, "flow: tui: %v\n", err)
		}
		return ExitFailure
	}
	return ExitOK
}
