package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"flow/runtime/job"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// Messages shared by the terminal UI and the line mode. The legacy, unknown
// and usage messages are the reference program's.
const (
	msgLegacy          = "Legacy executable plugins, automatic prompt mutation and cross-workspace memory are disabled in the safe runtime"
	msgUnknown         = "Unknown command; try /help"
	msgModelUsage      = "Usage: /model <installed-model>"
	msgBuildUsage      = "Usage: /build <request>"
	msgUndoUnavailable = "undo is unavailable until the journal exists"
	msgHelpNote        = "Every task has fresh role contexts; /clear needs no persistent cleanup"
	msgQuitArmed       = "press Ctrl-C again or Ctrl-D to quit"
	msgCancelling      = "cancelling…"
)

// cmdKind is what an input line asks for.
type cmdKind int

const (
	cmdEmpty cmdKind = iota
	cmdTask
	cmdHelp
	cmdStatus
	cmdCheck
	cmdTools
	cmdModels
	cmdModel
	cmdBuild
	cmdUndo
	cmdReview
	cmdClear
	cmdQuit
	cmdLegacy
	cmdUnknown
)

// command is a parsed input line.
type command struct {
	kind cmdKind
	arg  string // the task, or the command's argument
}

// commandHelp lists the commands with a short description, in /help order.
var commandHelp = []struct{ usage, what string }{
	{"/help", "this list"},
	{"/status", "workspace, trust, models, checks and the last run"},
	{"/check [name]", "run the configured checks (or one of them)"},
	{"/tools", "the tools the coder is offered"},
	{"/models", "the installed models"},
	{"/model <name>", "use an installed model for every role"},
	{"/build <request>", `run the task "Build <request>"`},
	{"/undo [run]", "undo the edits of the last run (or of run)"},
	{"/review [run]", "keep or revert the last run's change (or run's) hunk by hunk"},
	{"/clear", "clear the log"},
	{"/quit", "quit (also /exit and Ctrl-D)"},
}

// commandNames is the "commands" list of the /help JSON answer.
func commandNames() []string {
	names := make([]string, len(commandHelp))
	for i, c := range commandHelp {
		names[i] = c.usage
	}
	return names
}

// parseCommand classifies one input line. As in the reference, a command is
// the text before the first blank and must match exactly; the rest, trimmed,
// is its argument. Text that does not start with "/" is a task.
func parseCommand(line string) command {
	line = strings.TrimSpace(line)
	if line == "" {
		return command{kind: cmdEmpty}
	}
	if !strings.HasPrefix(line, "/") {
		return command{kind: cmdTask, arg: line}
	}
	name, arg := line, ""
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		name, arg = line[:i], strings.TrimSpace(line[i:])
	}
	kinds := map[string]cmdKind{
		"/help": cmdHelp, "/status": cmdStatus, "/check": cmdCheck, "/tools": cmdTools,
		"/models": cmdModels, "/model": cmdModel, "/build": cmdBuild, "/undo": cmdUndo, "/review": cmdReview,
		"/clear": cmdClear, "/quit": cmdQuit, "/exit": cmdQuit,
		"/plugins": cmdLegacy, "/evolve": cmdLegacy, "/memory": cmdLegacy, "/feedback": cmdLegacy,
	}
	kind, ok := kinds[name]
	if !ok {
		return command{kind: cmdUnknown, arg: name}
	}
	return command{kind: kind, arg: arg}
}

// buildTask is the task of `/build request`.
func buildTask(request string) string { return "Build " + request }

// modelListTimeout bounds the /models and /model calls to the backend.
const modelListTimeout = 15 * time.Second

// modelNames returns the installed models' names.
func modelNames(infos []model.ModelInfo) []string {
	names := make([]string, 0, len(infos))
	for _, m := range infos {
		names = append(names, m.Name)
	}
	return names
}

// listModels asks the backend for the installed models, bounded in time.
func listModels(ctx context.Context, rt Runtime) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	infos, err := rt.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot list the installed models: the model backend is unreachable: %w", err)
	}
	return modelNames(infos), nil
}

// resolveModel checks name against the installed models and returns the
// installed name to use: name itself, or name + ":latest" when only the
// tagged form is installed.
func resolveModel(ctx context.Context, rt Runtime, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%s", msgModelUsage)
	}
	installed, err := listModels(ctx, rt)
	if err != nil {
		return "", err
	}
	if slices.Contains(installed, name) {
		return name, nil
	}
	if !strings.Contains(name, ":") && slices.Contains(installed, name+":latest") {
		return name + ":latest", nil
	}
	if len(installed) == 0 {
		return "", fmt.Errorf("model %q is not installed; no models are installed", name)
	}
	return "", fmt.Errorf("model %q is not installed; installed models: %s", name, strings.Join(installed, ", "))
}

// answerMsg is the answer of an asynchronous command, for the place it
// reserved in the log when it was typed.
type answerMsg struct {
	place int64
	lines []logLine
}

// statusMsg is the answer of /status.
type statusMsg struct {
	place  int64
	status report.Status
}

// modelChosenMsg is the answer of /model: the installed name, or why not.
type modelChosenMsg struct {
	place int64
	name  string
	err   error
}

// execute carries out one parsed input line in the terminal UI. Commands
// that may take time (status, the backend's model list) run as commands,
// which Bubble Tea runs concurrently: each reserves the place of its
// answer in the log first, so that answers appear in the order typed.
// Runs, checks and undo run as jobs, one at a time.
func (m *ui) execute(c command) tea.Cmd {
	ctx, rt := m.ctx, m.rt
	switch c.kind {
	case cmdHelp:
		m.appendLines(helpLines()...)
	case cmdClear:
		m.clearLog()
	case cmdQuit:
		return m.requestQuit()
	case cmdStatus:
		place := m.reserve()
		return func() tea.Msg { return statusMsg{place: place, status: rt.Status(ctx)} }
	case cmdTools:
		m.appendLines(toolLines(rt.ToolNames())...)
	case cmdModels:
		inUse := m.models
		place := m.reserve()
		return func() tea.Msg {
			names, err := listModels(ctx, rt)
			if err != nil {
				return answerMsg{place: place, lines: []logLine{errorLine(err.Error())}}
			}
			return answerMsg{place: place, lines: modelLines(names, inUse)}
		}
	case cmdModel:
		if c.arg == "" {
			m.appendLines(errorLine(msgModelUsage))
			return nil
		}
		if err := rt.Busy(); err != nil {
			m.appendLines(errorLine(err.Error()))
			return nil
		}
		name := c.arg
		place := m.reserve()
		return func() tea.Msg {
			got, err := resolveModel(ctx, rt, name)
			return modelChosenMsg{place: place, name: got, err: err}
		}
	case cmdBuild:
		if c.arg == "" {
			m.appendLines(errorLine(msgBuildUsage))
			return nil
		}
		return m.startRun(buildTask(c.arg))
	case cmdTask:
		return m.startRun(c.arg)
	case cmdCheck:
		return m.startCheck(c.arg)
	case cmdUndo:
		return m.startUndo(c.arg)
	case cmdReview:
		return m.startReview(c.arg)
	case cmdLegacy:
		m.appendLines(logLine{kind: lineWarn, text: "unavailable  " + msgLegacy})
	case cmdUnknown:
		m.appendLines(errorLine(msgUnknown))
	}
	return nil
}

// chooseModel applies the answer of /model.
func (m *ui) chooseModel(msg modelChosenMsg) {
	switch {
	case msg.err != nil:
		m.fill(msg.place, []logLine{errorLine(msg.err.Error())})
	default:
		if err := m.rt.SetModel(msg.name); err != nil {
			m.fill(msg.place, []logLine{errorLine(err.Error())})
			return
		}
		// Every role keeps its server (config.UseModel).
		m.models = report.Models{Planner: msg.name, Coder: msg.name, Reviewer: msg.name, Servers: m.models.Servers}
		m.fill(msg.place, []logLine{{kind: lineOK, text: "model  " + msg.name + " for every role"}})
	}
}

// startRun starts task as a runtime job.
func (m *ui) startRun(task string) tea.Cmd {
	rt := m.rt
	return startJob(m, job.KindRun, func(ctx context.Context, emit func(progress.Event)) (*job.Job[report.Run], error) {
		return rt.StartRun(ctx, task, emit)
	}, func(rep report.Run) tea.Msg { return runDoneMsg{report: rep} })
}

// startCheck starts `/check [name]` as a runtime job.
func (m *ui) startCheck(name string) tea.Cmd {
	rt := m.rt
	return startJob(m, job.KindCheck, func(ctx context.Context, emit func(progress.Event)) (*job.Job[report.CheckReport], error) {
		return rt.StartCheck(ctx, name, emit)
	}, func(rep report.CheckReport) tea.Msg { return checkDoneMsg{report: rep} })
}

// startUndo starts `/undo [run]` as a runtime job.
func (m *ui) startUndo(runID string) tea.Cmd {
	rt := m.rt
	j, err := rt.StartUndo(m.ctx, runID)
	if err != nil && !errors.Is(err, job.ErrBusy) {
		m.appendLines(undoLines(report.Undo{}, err)...)
		return nil
	}
	return startJob(m, job.KindUndo, func(context.Context, func(progress.Event)) (*job.Job[report.Undo], error) {
		return j, err
	}, func(rep report.Undo) tea.Msg { return undoDoneMsg{report: rep} })
}

// startJob starts a runtime job and returns the command that delivers its
// events and result; when the runtime refuses (busy), it shows why.
func startJob[R any](m *ui, kind string, start func(ctx context.Context, emit func(progress.Event)) (*job.Job[R], error), result func(R) tea.Msg) tea.Cmd {
	q := newQueue()
	j, err := start(m.ctx, func(e progress.Event) { q.push(e) })
	if err != nil {
		m.appendLines(errorLine(err.Error()))
		return nil
	}
	m.job = &shownJob{id: j.ID, kind: kind, job: j.Handle, queue: q, shown: shown{diffs: map[string]bool{}}, start: m.now()}
	m.step, m.role = step{kind + " in progress", m.job.start}, step{}
	go forward(j, q, result)
	return tea.Batch(waitJob(j.ID, q), m.spin.Tick)
}
