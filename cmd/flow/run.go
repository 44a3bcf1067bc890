package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"flow/cmd/flow/internal/human"
	"flow/runtime/config"
	"flow/runtime/report"
)

// Exit codes of doc/design.md §1.1.
const (
	exitOK          = 0
	exitNotOK       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

const interruptedMessage = "flow interrupted; edits already written remain (see flow undo)"

// interruptedMessages say what an interrupt left behind, by command; a
// command not listed uses interruptedMessage when it may have written, and
// a plain sentence when it edits nothing.
var interruptedMessages = map[string]string{
	"run":    interruptedMessage,
	"check":  "flow interrupted; the running check was stopped",
	"undo":   "flow interrupted; files already restored stay restored (run flow undo again for the rest)",
	"review": "flow interrupted; decisions already made stay made (flow review --list shows them)",
	"status": "flow interrupted",
	"doctor": "flow interrupted",
}

// env is what every subcommand receives.
type env struct {
	opts   *options
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// run is the whole program behind main, callable from tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "flow: %s\n", err)
		return exitUsage
	}
	e := &env{opts: o, stdin: stdin, stdout: stdout, stderr: stderr, getenv: osGetenv}
	if o.help || o.command == "help" {
		return cmdHelp(e)
	}
	if o.version || o.command == "version" {
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	}
	switch o.command {
	case "serve":
		return cmdServe(ctx, e)
	case "", "tui":
		return cmdTUI(ctx, e)
	case "nvim":
		return cmdNvim(ctx, e)
	case "tasks":
		return cmdTasks(ctx, e)
	case "task-worker":
		return cmdTaskWorker(ctx, e)
	}
	rep, status, err := reportCommands[o.command](ctx, e)
	return finish(ctx, e, rep, status, err)
}

// reportCommands are the commands that print one JSON report.
var reportCommands = map[string]func(context.Context, *env) (any, string, error){
	"status": cmdStatus,
	"check":  cmdCheck,
	"run":    cmdRun,
	"undo":   cmdUndo,
	"review": cmdReview,
	"doctor": cmdDoctor,
}

// finish prints the report (or the error) and picks the exit code. After
// an interrupt, run and check still print their report (status
// interrupted, doc/design.md §14.9) and exit 130; the other commands print
// nothing on stdout.
func finish(ctx context.Context, e *env, rep any, status string, err error) int {
	if ctx.Err() != nil {
		return finishInterrupted(e, rep, err)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	if !printReport(e, rep) {
		return exitUsage
	}
	if status == report.StatusOK {
		return exitOK
	}
	return exitNotOK
}

// reportsOnInterrupt are the commands whose report says what an interrupt
// left behind: what a run wrote (to undo), which check was stopped.
var reportsOnInterrupt = map[string]bool{"run": true, "check": true}

// finishInterrupted ends a command that a signal interrupted: its report
// when it has one worth reading, the sentence of what remains, 130.
func finishInterrupted(e *env, rep any, err error) int {
	if err == nil && rep != nil && reportsOnInterrupt[e.opts.command] {
		printReport(e, rep)
	}
	msg, ok := interruptedMessages[e.opts.command]
	if !ok {
		msg = interruptedMessage
	}
	fmt.Fprintln(e.stderr, msg)
	return exitInterrupted
}

// printReport prints rep on stdout: readable on a terminal, one JSON
// object otherwise. It says on stderr when it cannot.
func printReport(e *env, rep any) bool {
	b, err := report.Marshal(rep)
	if err == nil {
		if e.humanOutput() {
			err = human.Render(e.stdout, e.opts.command, b, human.Options{Color: e.color()})
		} else {
			_, err = e.stdout.Write(append(b, '\n'))
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: write report: %s\n", err)
		return false
	}
	return true
}

// humanOutput reports whether the report goes to a person: stdout is a
// terminal and --json was not given. Scripts that pipe or redirect stdout
// get exactly the one JSON object.
func (e *env) humanOutput() bool { return !e.opts.json && isTerminal(e.stdout) }

// color reports whether human output may use ANSI colours: not with
// NO_COLOR set (https://no-color.org) or on a dumb terminal.
func (e *env) color() bool { return e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb" }

// loadConfig loads the configuration with the command-line overrides.
func loadConfig(e *env) (*config.Config, error) {
	o := e.opts
	cfg, err := config.Load(config.LoadOptions{
		ConfigFile: o.configFile,
		Workspace:  o.workspace,
		Model:      o.model,
		Trusted:    o.trusted,
		Getenv:     e.getenv,
	})
	if err == nil && o.behaviourPreserving {
		cfg.Verify.BehaviourPreserving = true
	}
	return cfg, err
}

// osGetenv reads the process environment; tests replace env.getenv.
func osGetenv(k string) string { return os.Getenv(k) }
