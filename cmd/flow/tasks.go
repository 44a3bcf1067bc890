package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"flow/internal/text"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// maxListedTasks is how many tasks `flow tasks` shows, newest first.
const maxListedTasks = 20

// tasksReport is the output of `flow tasks`.
type tasksReport struct {
	Status    string `json:"status"`
	Workspace string `json:"workspace"`
	// Running is the task in progress, if any.
	Running *taskLine  `json:"running,omitempty"`
	Tasks   []taskLine `json:"tasks"`
	Error   string     `json:"error,omitempty"`
}

// taskLine is one task as `flow tasks` shows it.
type taskLine struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Status    string `json:"status"`
	Message   string `json:"message,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	PID       int    `json:"pid,omitempty"`
}

// cmdTasks implements `flow tasks`: the workspace's recorded flow serve
// tasks (MCP tasks and every flow_run and flow_check), newest first, with
// the one in progress first of all. A task whose server died is shown
// failed ("interrupted"). Exit 0 unless the records cannot be read.
func cmdTasks(ctx context.Context, e *env) int {
	rep := listTasks(e)
	if e.humanOutput() {
		if ctx.Err() != nil {
			fmt.Fprintln(e.stderr, interruptedMessage)
			return exitInterrupted
		}
		fmt.Fprint(e.stdout, renderTasks(rep))
		if rep.Status != report.StatusOK {
			return exitNotOK
		}
		return exitOK
	}
	return finish(ctx, e, rep, rep.Status, nil)
}

func listTasks(e *env) tasksReport {
	cfg, err := loadConfig(e)
	if err != nil {
		return tasksReport{Status: report.StatusError, Tasks: []taskLine{}, Error: err.Error()}
	}
	rep := tasksReport{Status: report.StatusOK, Workspace: cfg.Workspace, Tasks: []taskLine{}}
	fail := func(err error) tasksReport {
		rep.Status, rep.Error = report.StatusError, fmt.Sprintf("cannot read the task records: %v; check the state directory's permissions", err)
		return rep
	}
	store, err := openJournal(e, cfg)
	if err != nil {
		return fail(err)
	}
	tasks, err := store.Tasks()
	if err != nil {
		return fail(err)
	}
	page, _, err := tasks.List("", maxListedTasks)
	if err != nil {
		return fail(err)
	}
	for _, t := range page {
		line := taskLineOf(t)
		rep.Tasks = append(rep.Tasks, line)
		if !t.Terminal() && rep.Running == nil {
			rep.Running = &line
		}
	}
	return rep
}

func taskLineOf(t journal.Task) taskLine {
	l := taskLine{ID: t.ID, Tool: t.Tool, Status: t.Status, Message: t.Message, RunID: t.RunID,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339)}
	if !t.Terminal() {
		l.PID = t.Owner.PID
	}
	return l
}

// renderTasks is the terminal form of the report: the running task, then
// one line per task.
func renderTasks(r tasksReport) string {
	var b strings.Builder
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Error)
		return b.String()
	}
	fmt.Fprintf(&b, "Tasks of %s\n", r.Workspace)
	if r.Running != nil {
		fmt.Fprintf(&b, "Running: %s %s since %s (flow process %d): %s\n", r.Running.Tool, r.Running.ID, r.Running.CreatedAt, r.Running.PID, text.FirstLine(r.Running.Message, 100))
	}
	if len(r.Tasks) == 0 {
		b.WriteString("No tasks recorded (flow serve records every flow_run and flow_check).\n")
	}
	for _, t := range r.Tasks {
		fmt.Fprintf(&b, "%-9s %-10s %s  %s  %s\n", t.Status, t.Tool, t.CreatedAt, t.ID, text.FirstLine(t.Message, 100))
	}
	return b.String()
}
