package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"flow/bufferfs"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
	"flow/runtime/tools"
	"flow/runtime/verify"
)

// toolbox dispatches model tool calls; [tools.Registry] implements it.
type toolbox interface {
	Schemas(role string) []model.Tool
	Call(ctx context.Context, role string, call model.ToolCall) tools.Result
}

var _ toolbox = (*tools.Registry)(nil)

// loopDeps are the agent's collaborators.
type loopDeps struct {
	// Backend is the chat model server. Required.
	Backend model.Backend
	// FS is the workspace file system. Required: it serves the file tools
	// and the fingerprints of changed files.
	FS bufferfs.FS
	// Checks builds a run's check runner, for the flow_check tool and for
	// host verification (all checks), calling events around each check so
	// that every check of the run is visible. nil means no checks can run.
	Checks func(events checkHooks) tools.CheckRunner
	// BeforeWrite is called before every write (the journal for undo).
	BeforeWrite tools.WriteHook
	// Tools, when non-nil, builds a run's toolbox from the run's tool
	// options (for example one that adds editor tools); nil means the
	// registry of FS. An error is reported as a warning event and the run
	// goes on with the toolbox returned.
	Tools func(ctx context.Context, opts tools.Options) (toolbox, error)
	// Editor gathers editor evidence for coverage; nil without an editor.
	Editor verify.EditorEvidence
	// EditorState, when set (an editor is attached), is probed after the
	// checks and after review: unsaved buffers or a change in the observed
	// editor snapshot make the verification stale (SPEC §8 item 5, §12.4).
	EditorState verify.EditorState
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// RunID, when non-empty, is the id of the next run (the journal names
	// its records with it before the run starts); else one is generated.
	RunID string
}

// checkHooks are the hooks a run's check runner calls around each check.
type checkHooks struct {
	OnStart func(c config.Check)
	OnEnd   func(r report.CheckResult)
}

// loop runs tasks in one workspace; [Service] is its only user. Its
// configuration is a snapshot taken by newLoop; later changes to the caller's Config have no effect. Runs should
// not overlap (the caller holds the workspace lock). A loop holds no state
// between runs: everything a run needs, its event sink included, is given
// to [loop.Run].
type loop struct {
	cfg  config.Config
	deps loopDeps
}

// newLoop returns a loop for cfg (a nil cfg means [config.Default]).
func newLoop(cfg *config.Config, deps loopDeps) *loop {
	c := config.Default()
	if cfg != nil {
		c = *cfg
	}
	c.Checks = slices.Clone(c.Checks)
	for i := range c.Checks {
		c.Checks[i].Cmd = slices.Clone(c.Checks[i].Cmd)
		c.Checks[i].Filetypes = slices.Clone(c.Checks[i].Filetypes)
		c.Checks[i].Env = slices.Clone(c.Checks[i].Env)
	}
	c.Warnings = slices.Clone(c.Warnings)
	// A budget that is not positive (a hand-built Config that skipped
	// validation) falls back to the default rather than disabling the loop.
	def := config.Default().Agent
	for _, b := range []struct {
		v *int
		d int
	}{
		{&c.Agent.MaxIterations, def.MaxIterations},
		{&c.Agent.MaxCycles, def.MaxCycles},
		{&c.Agent.MaxToolCalls, def.MaxToolCalls},
		{&c.Agent.MaxContextChars, def.MaxContextChars},
		{&c.Agent.MaxTaskChars, def.MaxTaskChars},
	} {
		if *b.v <= 0 {
			*b.v = b.d
		}
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &loop{cfg: c, deps: deps}
}

// run is the state of one run.
type run struct {
	a       *loop
	cfg     *config.Config
	tools   toolbox
	checks  tools.CheckRunner // nil when no checks can run
	rep     *report.Run
	changed map[string]bool
	writes  int     // file changes made by tools, each edit of a file counted
	plan    string  // the planner's final answer
	invoked int     // role invocations so far (the k of synthesised call ids)
	window  *window // the prompt budget of the context window
	events  func(Event)

	// planner is the planner's outcome, for the verification gate.
	planner report.Role
	// guard holds the pre-run contents and the baseline (guard.go).
	guard *runGuard
	// edit is the current tool call's write, for its event's diff.
	edit editCapture

	mu    sync.Mutex // guards phase and serialises events
	phase string
}

// setPhase records what the run is doing, for check events.
func (r *run) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
}

// emit stamps a run event and hands it to the run's sink.
func (r *run) emit(e Event) {
	if r.events == nil {
		return
	}
	e.RunID = r.rep.RunID
	if e.Time.IsZero() {
		e.Time = r.a.deps.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Role == "" && (e.Kind == EventCheckStart || e.Kind == EventCheckEnd) {
		e.Role = r.phase
	}
	r.events(e)
}

// checkEvents are the hooks of the run's check runner.
func (r *run) checkEvents() checkHooks {
	return checkHooks{
		OnStart: func(c config.Check) { r.emit(Event{Kind: EventCheckStart, Check: c.Name}) },
		OnEnd: func(res report.CheckResult) {
			r.emit(Event{Kind: EventCheckEnd, Check: res.Name, Status: res.Status, Error: res.Error, DurationMS: res.DurationMS})
		},
	}
}

// Run runs task and returns its report; events, when non-nil, receives the
// run's progress events synchronously. It never panics: an internal failure
// becomes an "error" report. Cancelling ctx stops the run at the next safe
// point (model calls and checks get ctx and abort) with status "cancelled";
// edits already written stay and are listed in changed_files.
func (a *loop) Run(ctx context.Context, task string, events func(Event)) (out report.Run) {
	start := a.deps.Now()
	initial := report.Run{
		Status:    report.StatusUnverified,
		Task:      task,
		RunID:     a.runID(start),
		Workspace: a.cfg.Workspace,
		StartedAt: start.UTC().Format(time.RFC3339),
	}.Normalize()
	rep := &initial
	if rep.Workspace == "" && a.deps.FS != nil {
		rep.Workspace = a.deps.FS.Root()
	}
	r := &run{a: a, cfg: &a.cfg, rep: rep, changed: map[string]bool{}, events: events}

	defer func() {
		if p := recover(); p != nil {
			rep.Status = report.StatusError
			rep.Verified = false
			rep.Error = fmt.Sprintf("internal error: %v", p)
			rep.Reason = ""
		}
		settle(rep)
		rep.ChangedFiles = r.changedList()
		rep.Diffs = r.reportDiffs(ctx, rep.ChangedFiles)
		rep.DurationMS = a.deps.Now().Sub(start).Milliseconds()
		out = *rep
		final := out
		r.emit(Event{Kind: EventRunEnd, Status: rep.Status, Error: rep.Error, DurationMS: rep.DurationMS, Report: &final})
	}()

	r.emit(Event{Kind: EventRunStart, Message: task})
	if strings.TrimSpace(task) == "" || utf8.RuneCountInString(task) > a.cfg.Agent.MaxTaskChars {
		r.fail(invalidTaskReason(r.cfg, task))
		return
	}
	if err := r.setup(ctx); err != nil {
		if ctx.Err() != nil {
			r.cancel()
		} else {
			r.fail("The run could not start: " + err.Error())
		}
		return
	}
	r.execute(ctx)
	return
}

// setup checks the dependencies and builds the run's toolbox.
func (r *run) setup(ctx context.Context) error {
	d := r.a.deps
	switch {
	case d.Backend == nil:
		return fmt.Errorf("no model backend configured")
	case d.FS == nil:
		return fmt.Errorf("no workspace file system configured")
	}
	if err := d.FS.CheckRoot(ctx); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	// The guard records every file's pre-run content through the write
	// hook of whatever toolbox the run gets.
	r.guard = newRunGuard()
	if d.Checks != nil {
		r.checks = d.Checks(r.checkEvents())
	}
	opts := tools.Options{Trusted: r.cfg.Trusted, Checks: r.checks, BeforeWrite: r.guard.originals.Hook(r.edit.hook(d.BeforeWrite))}
	r.tools = tools.New(d.FS, opts)
	if d.Tools != nil {
		box, err := d.Tools(ctx, opts)
		if box != nil {
			r.tools = box
		}
		if err != nil {
			r.emit(Event{Kind: EventWarning, Message: err.Error()})
		}
	}
	return nil
}

// fail ends the run with status "error".
func (r *run) fail(msg string) {
	r.rep.Status = report.StatusError
	r.rep.Verified = false
	r.rep.Error = msg
}

// cancel ends the run with status "cancelled".
func (r *run) cancel() {
	r.rep.Status = report.StatusCancelled
	r.rep.Verified = false
	r.rep.Error = ReasonCancelled
	r.rep.Reason = ReasonCancelled
}

// execute runs the planner and the cycles (SPEC §7, reference §6.2).
func (r *run) execute(ctx context.Context) {
	// The baseline comes first, so that the planner and the coder see the
	// project's own failures (the best pointer to what a task is about).
	r.measureBaseline(ctx)
	if ctx.Err() != nil {
		r.cancel()
		return
	}
	before := map[string]any{}
	if f := failingBefore(r.rep.Baseline); len(f) > 0 {
		before["failing_checks_before_changes"] = f
	}
	var planner report.Role
	if why := r.plannerSkip(ctx); why != "" {
		planner = r.skipRole(config.RolePlanner, why)
	} else {
		planner = r.role(ctx, config.RolePlanner, before)
	}
	if planner.Status == report.StatusCancelled {
		r.cancel()
		return
	}
	if planner.Status != report.StatusOK && planner.Status != report.StatusSkipped {
		r.rep.Status = planner.Status
		r.rep.Error = roleReason(r.cfg, planner)
		if planner.Error == "" {
			r.rep.Error = MsgPlanningFailed + ": " + r.rep.Error
		}
		return
	}
	plan := ""
	if planner.Status == report.StatusOK {
		plan = withoutCode(planner.Summary)
	}
	r.plan, r.planner = plan, planner
	if !r.cfg.Trusted {
		r.rep.Status = report.StatusUnverified
		r.rep.Summary = planner.Summary
		r.rep.Reason = ReasonReadOnly
		return
	}
	coderCtx := map[string]any{"plan": plan}
	if f, ok := before["failing_checks_before_changes"]; ok {
		coderCtx["failing_checks_before_changes"] = f
	}
	for range r.cfg.Agent.MaxCycles {
		r.rep.Cycles++
		o := r.cycle(ctx, coderCtx)
		if o.cancelled || ctx.Err() != nil {
			r.cancel()
			return
		}
		if r.conclude(o) {
			return
		}
		coderCtx = repairContext(plan, o)
	}
}

// conclude sets the run's status from one cycle's outcome (reference §6.2)
// and reports whether the run stops here.
func (r *run) conclude(o cycleOutcome) bool {
	rep := r.rep
	v := o.verification
	approved := o.reviewer.Approved
	if o.verified {
		rep.Status, rep.Verified, rep.Reason, rep.Error = report.StatusOK, true, "", ""
		return true
	}
	rep.Verified = false
	rep.Error = ""
	if v.Status == report.StatusFailed || (approved != nil && !*approved) {
		rep.Status = report.StatusFailed
	} else {
		rep.Status = report.StatusUnverified
	}
	rep.Reason = o.reason(r.cfg)
	for _, role := range []report.Role{o.coder, o.reviewer} {
		if role.Status == report.StatusError {
			rep.Status = report.StatusError
			rep.Reason = roleReason(r.cfg, role)
			rep.Error = rep.Reason
			return true
		}
	}
	return false
}

// changedList returns the sorted changed files.
func (r *run) changedList() []string {
	out := make([]string, 0, len(r.changed))
	for p := range r.changed {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// runID returns the id of the run starting at t.
func (a *loop) runID(t time.Time) string {
	if a.deps.RunID != "" {
		return a.deps.RunID
	}
	return report.NewRunID(t)
}
