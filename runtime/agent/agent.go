package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"flow/runtime/config"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

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

// checkEvents are the hooks of the run's check runner.
func (r *run) checkEvents() checkHooks {
	return checkHooks{
		OnStart: func(c config.Check) { r.emit(progress.Event{Kind: progress.CheckStart, Check: c.Name}) },
		OnEnd: func(res report.CheckResult) {
			r.emit(progress.Event{Kind: progress.CheckEnd, Check: res.Name, Status: res.Status, Error: res.Error, DurationMS: res.DurationMS})
		},
	}
}

// Run runs task and returns its report; events, when non-nil, receives the
// run's progress events synchronously. Cancelling ctx stops the run at the
// next safe point (model calls and checks get ctx and abort) with status
// "cancelled"; edits already written stay and are listed in changed_files.
// It never panics: a panic becomes an "error" report that keeps what the
// run did so far.
func (a *loop) Run(ctx context.Context, task string, events func(progress.Event)) (rep report.Run) {
	r := a.start(task, events)
	defer func() {
		if p := recover(); p != nil {
			rep = r.abort(ctx, p)
		}
	}()
	r.execute(ctx)
	return r.finish(ctx)
}

// start makes the run of task and emits its run_start event.
func (a *loop) start(task string, events func(progress.Event)) *run {
	now := a.deps.Now()
	e := &env{cfg: &a.cfg, deps: &a.deps, id: a.runID(now), task: task, changed: map[string]bool{}, events: events,
		beforeTurn: newBeforeTurnRules()}
	e.rec = &recorder{emit: e.emit}
	r := &run{env: e, started: now, result: result{status: report.StatusUnverified}}
	r.emit(progress.Event{Kind: progress.RunStart, Message: task})
	return r
}

// execute runs the task, unless it cannot run at all.
func (r *run) execute(ctx context.Context) {
	if strings.TrimSpace(r.task) == "" || utf8.RuneCountInString(r.task) > r.cfg.Agent.MaxTaskChars {
		r.fail(invalidTaskReason(r.cfg, r.task))
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
	r.work(ctx)
}

// finish assembles the run's report, emits its run_end event and returns
// it.
func (r *run) finish(ctx context.Context) report.Run {
	rep := r.report(ctx)
	final := rep
	r.emit(progress.Event{Kind: progress.RunEnd, Status: rep.Status, Error: rep.Error, DurationMS: rep.DurationMS, Report: &final})
	return rep
}

// abort ends a run whose work panicked with p: an "error" report that
// keeps what the run did so far.
func (r *run) abort(ctx context.Context, p any) report.Run {
	r.result = result{status: report.StatusError, summary: r.result.summary, err: fmt.Sprintf("internal error: %v", p)}
	return r.finish(ctx)
}

// report assembles the run's report from its state.
func (r *run) report(ctx context.Context) report.Run {
	res := r.result
	rep := report.Run{
		Status: res.status, Verified: res.verified, Task: r.task, RunID: r.id,
		Workspace: r.cfg.Workspace, StartedAt: r.started.UTC().Format(time.RFC3339),
		Roles: r.rolesSoFar(), Events: r.rec.events, Checks: r.checked, VerificationHistory: r.history,
		Baseline: r.baseline, HostEdits: r.hostEdits, ModelCalls: r.rec.modelCalls, ToolCalls: r.rec.toolCalls, Cycles: r.cycles,
		Usage: r.rec.usage, Summary: res.summary, Reason: res.reason, Error: res.err,
	}
	if f := r.format; f.edit != "" {
		rep.EditFormat = &report.EditFormat{Format: f.edit, Why: f.editWhy, Tools: config.ToolsText, ToolsWhy: f.toolsWhy}
		if f.nativeTools {
			rep.EditFormat.Tools = config.ToolsNative
		}
	}
	if rep.Workspace == "" && r.deps.FS != nil {
		rep.Workspace = r.deps.FS.Root()
	}
	if n := len(r.history); n > 0 {
		v := r.history[n-1]
		rep.Verification = &v
	}
	settle(&rep)
	rep.ChangedFiles = r.changedList()
	rep.Diffs = r.reportDiffs(ctx, rep.ChangedFiles)
	rep.DurationMS = r.deps.Now().Sub(r.started).Milliseconds()
	return rep.Normalize()
}

// setup checks the dependencies and builds the run's toolbox.
func (r *run) setup(ctx context.Context) error {
	d := r.deps
	switch {
	case d.Backend == nil:
		return fmt.Errorf("no model backend configured")
	case r.missingServer() != "":
		return fmt.Errorf("%s", r.missingServer())
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
			r.emit(progress.Event{Kind: progress.Warning, Message: err.Error()})
		}
	}
	// The server is asked about the coder's model at most once, and only
	// when a setting is "auto".
	var described *coderModel
	describe := func() coderModel {
		if described == nil {
			m := r.describeCoderModel(ctx)
			described = &m
		}
		return *described
	}
	r.format.edit, r.format.editWhy = r.resolveEditFormat(describe)
	r.format.nativeTools, r.format.toolsWhy = r.resolveToolDeclarations(describe)
	return nil
}

// work runs the planner and the cycles (doc/design.md §6).
func (r *run) work(ctx context.Context) {
	// The baseline comes first, so that the planner and the coder see the
	// project's own failures (the best pointer to what a task is about).
	r.measureBaseline(ctx)
	if ctx.Err() != nil {
		r.cancel()
		return
	}
	r.failing = failingRequired(r.baseline)
	before := map[string]any{}
	if f := failingBefore(r.baseline); len(f) > 0 {
		before["failing_checks_before_changes"] = f
	}
	var planner outcome
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
		r.result = result{status: planner.Status, err: planner.reason(r.cfg)}
		return
	}
	plan := ""
	if planner.Status == report.StatusOK {
		plan = withoutCode(planner.Summary)
	}
	r.plan, r.planner = plan, planner.Role
	if !r.cfg.Trusted {
		r.result = result{status: report.StatusUnverified, summary: planner.Summary, reason: ReasonReadOnly}
		return
	}
	coderCtx := map[string]any{"plan": plan, nowKey: nowWithTask(nowCoder, r.task)}
	if f, ok := before["failing_checks_before_changes"]; ok {
		coderCtx["failing_checks_before_changes"] = f
	}
	askedForEvidence := false
	for range r.cfg.Agent.MaxCycles {
		r.cycles++
		o := r.cycle(ctx, coderCtx)
		if o.cancelled || ctx.Err() != nil {
			r.cancel()
			return
		}
		if r.conclude(o) {
			return
		}
		if o.verification.NoEvidence {
			if askedForEvidence {
				// The coder was asked once for a test that shows the
				// change (doc/design.md §8.7); more cycles would ask again.
				r.result.reason = ReasonNoEvidenceAfterAsking
				return
			}
			askedForEvidence = true
		}
		r.failing = failingRequired(o.verification.Checks)
		var tests []string
		if o.verification.NoEvidence {
			tests = r.testFilesFor(ctx, o.changed)
		}
		coderCtx = repairContext(r.task, plan, o, r.policyFor(config.RoleCoder).whole, tests)
	}
}

// conclude sets the run's status from one cycle's outcome (doc/design.md
// §6.1) and reports whether the run stops here.
func (r *run) conclude(o cycleOutcome) bool {
	res := result{summary: o.coder.Summary}
	if o.verified {
		res.status, res.verified = report.StatusOK, true
		r.result = res
		return true
	}
	for _, role := range []outcome{o.coder, o.reviewer} {
		if role.Status == report.StatusError {
			res.status = report.StatusError
			res.reason = role.reason(r.cfg)
			res.err = res.reason
			r.result = res
			return true
		}
	}
	// A rejection fails the run only when the reviewer is a gate
	// (verify.reviewer, doc/design.md §8.9); advisory, it leaves the run
	// unverified and its issues still reach the repair and the person.
	rejectedStatus := report.StatusFailed
	if r.cfg.Verify.ReviewerIsAdvisory() {
		rejectedStatus = report.StatusUnverified
	}
	if o.again != nil {
		// Another cycle would ask the coder what it was just asked.
		res.status, res.reason = rejectedStatus, o.reason(r.cfg)
		r.result = res
		return true
	}
	approved := o.reviewer.Approved
	res.status = report.StatusUnverified
	if o.verification.Status == report.StatusFailed || (approved != nil && !*approved) {
		res.status = report.StatusFailed
	}
	if o.verification.Status != report.StatusFailed && approved != nil && !*approved {
		res.status = rejectedStatus
	}
	res.reason = o.reason(r.cfg)
	r.result = res
	return false
}

// runID returns the id of the run starting at t.
func (a *loop) runID(t time.Time) string {
	if a.deps.RunID != "" {
		return a.deps.RunID
	}
	return report.NewRunID(t)
}
