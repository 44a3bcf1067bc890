// Package agent runs flow's bounded planner → coder → reviewer workflow
// (SPEC §7): one read-only planning role, then up to max_cycles cycles of a
// coder, host verification and a read-only reviewer, each role in a fresh
// conversation with an embedded system prompt, every budget enforced by the
// host, and "verified" computed from evidence (package verify), never from
// what the model says. Progress is reported as typed [Event]s.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// Toolbox dispatches model tool calls; [tools.Registry] implements it.
type Toolbox interface {
	Schemas(role string) []model.Tool
	Call(ctx context.Context, role string, call model.ToolCall) tools.Result
}

var _ Toolbox = (*tools.Registry)(nil)

// Deps are the agent's collaborators.
type Deps struct {
	// Backend is the chat model server. Required.
	Backend model.Backend
	// FS is the workspace file system. Required: it serves the file tools
	// and the fingerprints of changed files.
	FS bufferfs.FS
	// Checks runs the named checks, for the flow_check tool and for host
	// verification (all checks). nil means no checks can run.
	Checks tools.CheckRunner
	// BeforeWrite is called before every write (the journal for undo).
	BeforeWrite tools.WriteHook
	// Tools, when non-nil, replaces the registry built from FS, Checks and
	// BeforeWrite for each run (for example one that adds editor tools).
	Tools Toolbox
	// Editor gathers editor evidence for coverage; nil without an editor.
	Editor verify.EditorEvidence
	// EditorState, when set (an editor is attached), is probed after the
	// checks and after review: unsaved buffers or a change in the observed
	// editor snapshot make the verification stale (SPEC §8 item 5, §12.4).
	EditorState verify.EditorState
	// Events receives progress events, synchronously; nil drops them.
	Events func(Event)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// RunID, when non-empty, is the id of the next run (the journal names
	// its records with it before the run starts); else one is generated.
	RunID string
	// Originals, when set, records the pre-run content of every file the
	// run writes: Tools' write hook must feed it (see [verify.Originals]).
	// nil makes the run record it in the registry it builds itself.
	Originals *verify.Originals
}

// Agent runs tasks in one workspace. Its configuration is a snapshot taken
// by [New]; later changes to the caller's Config have no effect. Runs should
// not overlap (the caller holds the workspace lock), but the check hooks may
// be called from any goroutine.
type Agent struct {
	cfg  config.Config
	deps Deps

	emitMu sync.Mutex // serialises Events calls

	mu      sync.Mutex
	current *run // the run in progress, for check hooks
}

// New returns an Agent for cfg (a nil cfg means [config.Default]).
func New(cfg *config.Config, deps Deps) *Agent {
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
	return &Agent{cfg: c, deps: deps}
}

// OnCheckStart emits a check_start event; wire it to the check runner's
// OnStart hook so that checks run by flow_check and by host verification
// are visible.
func (a *Agent) OnCheckStart(c config.Check) {
	a.emit(Event{Kind: EventCheckStart, RunID: a.currentRunID(), Role: a.currentPhase(), Check: c.Name})
}

// OnCheckEnd emits a check_end event; wire it to the check runner's OnEnd
// hook.
func (a *Agent) OnCheckEnd(r report.CheckResult) {
	a.emit(Event{
		Kind: EventCheckEnd, RunID: a.currentRunID(), Role: a.currentPhase(), Check: r.Name,
		Status: r.Status, Error: r.Error, DurationMS: r.DurationMS,
	})
}

// emit stamps e and hands it to the event sink.
func (a *Agent) emit(e Event) {
	if a.deps.Events == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = a.deps.Now()
	}
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	a.deps.Events(e)
}

func (a *Agent) currentRunID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current == nil {
		return ""
	}
	return a.current.rep.RunID
}

func (a *Agent) currentPhase() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current == nil {
		return ""
	}
	return a.current.phase
}

// run is the state of one run.
type run struct {
	a       *Agent
	cfg     *config.Config
	tools   Toolbox
	rep     *report.Run
	changed map[string]bool
	plan    string // the planner's final answer
	invoked int    // role invocations so far (the k of synthesised call ids)
	phase   string // guarded by a.mu

	// planner is the planner's outcome, for the verification gate.
	planner report.Role
	// guard holds the pre-run contents and the baseline (guard.go).
	guard *runGuard
}

// setPhase records what the run is doing, for check events.
func (r *run) setPhase(p string) {
	r.a.mu.Lock()
	r.phase = p
	r.a.mu.Unlock()
}

// emit sends a run event.
func (r *run) emit(e Event) {
	e.RunID = r.rep.RunID
	r.a.emit(e)
}

// Run runs task and returns its report. It never panics: an internal failure
// becomes an "error" report. Cancelling ctx stops the run at the next safe
// point (model calls and checks get ctx and abort) with status "cancelled";
// edits already written stay and are listed in changed_files.
func (a *Agent) Run(ctx context.Context, task string) (out report.Run) {
	start := a.deps.Now()
	rep := &report.Run{
		Status:              report.StatusUnverified,
		Task:                task,
		RunID:               a.runID(start),
		Workspace:           a.cfg.Workspace,
		StartedAt:           start.UTC().Format(time.RFC3339),
		Roles:               []report.Role{},
		Events:              []report.ToolEvent{},
		ChangedFiles:        []string{},
		Checks:              []report.CheckResult{},
		VerificationHistory: []report.Verification{},
	}
	if rep.Workspace == "" && a.deps.FS != nil {
		rep.Workspace = a.deps.FS.Root()
	}
	r := &run{a: a, cfg: &a.cfg, rep: rep, changed: map[string]bool{}}
	a.mu.Lock()
	a.current = r
	a.mu.Unlock()

	defer func() {
		if p := recover(); p != nil {
			rep.Status = report.StatusError
			rep.Verified = false
			rep.Error = fmt.Sprintf("internal error: %v", p)
			rep.Reason = ""
		}
		rep.ChangedFiles = r.changedList()
		rep.DurationMS = a.deps.Now().Sub(start).Milliseconds()
		a.mu.Lock()
		a.current = nil
		a.mu.Unlock()
		out = *rep
		final := out
		a.emit(Event{Kind: EventRunEnd, RunID: rep.RunID, Status: rep.Status, Error: rep.Error, DurationMS: rep.DurationMS, Report: &final})
	}()

	r.emit(Event{Kind: EventRunStart, Message: task})
	if strings.TrimSpace(task) == "" || utf8.RuneCountInString(task) > a.cfg.Agent.MaxTaskChars {
		r.fail(MsgInvalidTask)
		return
	}
	if err := r.setup(ctx); err != nil {
		if ctx.Err() != nil {
			r.cancel()
		} else {
			r.fail(err.Error())
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
	r.tools = d.Tools
	r.guard = newRunGuard(d.Originals)
	if r.tools == nil {
		hook := d.BeforeWrite
		if d.Originals == nil {
			hook = r.guard.originals.Hook(hook)
		}
		r.tools = tools.New(d.FS, tools.Options{Trusted: r.cfg.Trusted, Checks: d.Checks, BeforeWrite: hook})
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
	r.rep.Error = MsgCancelled
	r.rep.Reason = ""
}

// execute runs the planner and the cycles (SPEC §7, reference §6.2).
func (r *run) execute(ctx context.Context) {
	planner := r.role(ctx, config.RolePlanner, map[string]any{})
	if planner.Status == report.StatusCancelled {
		r.cancel()
		return
	}
	if planner.Status != report.StatusOK {
		r.rep.Status = planner.Status
		r.rep.Error = planner.Error
		if r.rep.Error == "" {
			r.rep.Error = MsgPlanningFailed
		}
		return
	}
	plan := planner.Summary
	r.plan, r.planner = plan, planner
	if !r.cfg.Trusted {
		r.rep.Status = report.StatusUnverified
		r.rep.Summary = plan
		r.rep.Reason = ReasonReadOnly
		return
	}
	coderCtx := map[string]any{"plan": plan}
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
	rep.Reason = o.reason()
	for _, role := range []report.Role{o.coder, o.reviewer} {
		if role.Status == report.StatusError {
			rep.Status = report.StatusError
			rep.Error = role.Error
			rep.Reason = ""
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
func (a *Agent) runID(t time.Time) string {
	if a.deps.RunID != "" {
		return a.deps.RunID
	}
	return newRunID(t)
}

// newRunID returns a sortable, unique run id: a UTC timestamp and 12 random
// hex digits, e.g. 20261129T152400Z-3f9a0c1b2d4e.
func newRunID(t time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
