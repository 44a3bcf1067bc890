package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/check"
	"flow/runtime/config"
	"flow/runtime/editor"
	"flow/runtime/job"
	"flow/runtime/journal"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
	"flow/runtime/verify"
)

// statusEditorTimeout bounds the editor probe of a status report by default.
const statusEditorTimeout = 5 * time.Second

// FileIOEditor names buffer-aware file I/O (through an attached editor) in
// status reports.
const FileIOEditor = "editor"

// ServiceOptions are the collaborators of a [Service].
type ServiceOptions struct {
	// FS is the workspace file system: a bufferfs.Disk, or the buffer-aware
	// editor FS inside Neovim. Required.
	FS bufferfs.FS
	// Backend is the model server. Required for runs.
	Backend model.Backend
	// Servers are the clients of the [servers.NAME] tables, by name; a
	// role sent to a server without one cannot run (doc/design.md §7.9).
	Servers map[string]model.Backend
	// Catalog lists installed models (/models, /model, doctor); optional.
	Catalog model.Catalog
	// Store is the workspace's journal (undo, history, cross-process lock).
	// nil disables undo and history; runs still work.
	Store *journal.Store
	// Version is flow's version, for the status report.
	Version string
	// FileIO names the file I/O mode for the status report; "" means the
	// FS's mode ("editor" with an Editor).
	FileIO string
	// Editor is the attached editor, nil without one. Everything editor
	// related derives from it: each run's toolbox offers its editor tools
	// (doc/design.md §11.3), verification takes its coverage evidence (editor_lint,
	// editor_diagnostics) and its freshness snapshots (a run's
	// verification becomes stale when the editor changes during review),
	// checks refuse to run over unsaved buffers and become stale when the
	// editor changes meanwhile (verify.EditorChecks), and status reports
	// describe it.
	Editor editor.Session
	// EditorStatusTimeout bounds the editor probe of a status report; 0
	// means 5 s.
	EditorStatusTimeout time.Duration
	// Warnings are added to the configuration's warnings in status reports.
	Warnings []string
	// Home and UserFile are the user's home directory and user
	// configuration file, for the onboarding warnings ("" when unknown).
	Home, UserFile string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// ReplayChecks, when set, answers every named check instead of its
	// command (check.Runner.Replay): the reviewer measurement
	// (runtime/measure) replays what its cases' real checks said. nil in
	// every front end.
	ReplayChecks func(c config.Check) (status, stdout string)
	// Reviewer, when set, tells what is known of the configured
	// reviewer's judgement (its measurement, doc/design.md §8.10); every
	// run's report and status carry it.
	Reviewer func(cfg *config.Config) report.ReviewerStanding
}

// Service is the runtime every front end shares (CLI, MCP server, Neovim
// host, TUI): runs, checks, status, undo and model selection over one
// workspace. Runs, checks and undos are jobs of one [job.Gate]: one at a
// time in the process, under the journal's lock across processes. Each
// front end starts them (StartRun, StartCheck, StartUndo), gets a
// [*job.Job] or a [*job.BusyError], and only translates the events and the
// result for its user.
type Service struct {
	opts ServiceOptions
	gate job.Gate

	mu   sync.Mutex
	cfg  config.Config
	last *report.Run
}

// NewService returns a Service for cfg. The configuration is copied; use
// [Service.SetModel] to change the model later.
func NewService(cfg *config.Config, opts ServiceOptions) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, cfg: *cfg}
	if opts.Store != nil {
		s.gate.Lock = s.lockWorkspace
	}
	return s
}

// Config returns a copy of the current configuration.
func (s *Service) Config() config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// lockWorkspace takes the journal's cross-process lock for a job; another
// process holding it is a [*job.BusyError] naming its pid.
func (s *Service) lockWorkspace() (func(), error) {
	lock, err := s.opts.Store.Lock()
	if err != nil {
		var held *journal.BusyError
		if errors.As(err, &held) {
			return nil, &job.BusyError{PID: held.PID, Err: err}
		}
		return nil, err
	}
	return func() { _ = lock.Unlock() }, nil
}

// failure is the status of a job that could not start: busy, or error.
func failure(err error) string {
	if errors.Is(err, job.ErrBusy) {
		return report.StatusBusy
	}
	return report.StatusError
}

// CancelAll cancels the job in progress, if any (:FlowStop, shutdown), and
// returns how many it cancelled; their reports say "cancelled".
func (s *Service) CancelAll() int { return s.gate.CancelAll() }

// Wait waits until every job has returned or ctx ends, and reports whether
// they all returned.
func (s *Service) Wait(ctx context.Context) bool { return s.gate.Wait(ctx) }

// checkRunner builds the named-check runner for the current configuration.
func (s *Service) checkRunner(cfg *config.Config, ev checkHooks) *check.Runner {
	return &check.Runner{Root: cfg.Workspace, Trusted: cfg.Trusted, Checks: cfg.Checks, Fresh: s.opts.FS.CheckRoot,
		OnStart: ev.OnStart, OnEnd: ev.OnEnd, Replay: s.opts.ReplayChecks}
}

// StartRun starts task as a job; events, when non-nil, receives the run's
// progress events synchronously, from the job's goroutine.
func (s *Service) StartRun(ctx context.Context, task string, events func(progress.Event)) (*job.Job[report.Run], error) {
	return job.Start(&s.gate, ctx, job.KindRun, func(ctx context.Context, j *job.Job[report.Run]) (report.Run, string) {
		rep := s.run(ctx, task, tagged(j.Handle, events))
		return rep, rep.Status
	}, func(p any) report.Run {
		msg := job.PanicMessage(job.KindRun, p)
		return report.Run{Status: report.StatusError, Task: task, Workspace: s.Config().Workspace, Reason: msg, Error: msg}.Normalize()
	})
}

// Run runs task and returns its report: [Service.StartRun], waited for; a
// job that cannot start is a "busy" or "error" report.
func (s *Service) Run(ctx context.Context, task string, events func(progress.Event)) report.Run {
	j, err := s.StartRun(ctx, task, events)
	if err != nil {
		cfg := s.Config()
		return report.Run{Status: failure(err), Task: task, Workspace: cfg.Workspace, Reason: err.Error(), Error: err.Error()}.Normalize()
	}
	rep, _ := j.Result()
	return rep
}

// run runs task inside its job.
func (s *Service) run(ctx context.Context, task string, events func(progress.Event)) report.Run {
	cfg := s.Config()
	runID := report.NewRunID(s.opts.Now())
	var jr *journal.Run
	// Every run is recorded, read-only ones too: its report becomes the
	// workspace's history, and undo of a run that wrote nothing says so.
	if s.opts.Store != nil {
		var err error
		if jr, err = s.opts.Store.Begin(runID, task); err != nil {
			return report.Run{Status: report.StatusError, Task: task, RunID: runID, Workspace: cfg.Workspace,
				Error: fmt.Sprintf("cannot start the write journal (undo): %v", err)}.Normalize()
		}
		defer jr.Close()
	}
	deps := loopDeps{
		Backend: s.opts.Backend, Servers: s.opts.Servers, FS: s.opts.FS, Now: s.opts.Now, RunID: runID,
		Checks: func(ev checkHooks) tools.CheckRunner { return s.editorChecks(s.checkRunner(&cfg, ev)) },
	}
	if ed := s.opts.Editor; ed != nil {
		deps.Editor = tools.EditorEvidence{Editor: ed}
		deps.EditorState = ed
		deps.Tools = func(ctx context.Context, o tools.Options) (toolbox, error) {
			return tools.WithEditor(ctx, tools.New(s.opts.FS, o), ed)
		}
	}
	if jr != nil {
		deps.BeforeWrite = jr.BeforeWrite
		if cfg.Agent.Transcript {
			deps.Transcript = jr.Transcript
		}
	}
	rep := newLoop(&cfg, deps).Run(ctx, task, events)
	if s.opts.Reviewer != nil {
		rep = withReviewer(rep, s.opts.Reviewer(&cfg))
	}
	if in, ok := report.InterruptOf(ctx); ok {
		// A signal to the process, not a client's cancel: the journal and
		// the report say so (doc/design.md §6.13).
		rep = rep.Interrupted(in)
	}
	if jr != nil {
		if err := jr.Finish(rep); err != nil && rep.Error == "" {
			rep.Error = fmt.Sprintf("report not stored in the journal: %v", err)
		}
	}
	s.mu.Lock()
	s.last = &rep
	s.mu.Unlock()
	return rep
}

// StartCheck starts the named checks (all when name is "") as a job;
// events, when non-nil, receives check_start and check_end events.
func (s *Service) StartCheck(ctx context.Context, name string, events func(progress.Event)) (*job.Job[report.CheckReport], error) {
	cfg := s.Config()
	return job.Start(&s.gate, ctx, job.KindCheck, func(ctx context.Context, j *job.Job[report.CheckReport]) (report.CheckReport, string) {
		rep := s.editorChecks(s.checkRunner(&cfg, s.checkEvents(tagged(j.Handle, events)))).Run(ctx, name)
		if in, ok := report.InterruptOf(ctx); ok {
			rep = rep.Interrupted(in)
		}
		if rep.Status != report.StatusOK && rep.Error == "" {
			// As for runs: the sentence is the error MCP hosts show.
			rep.Error = rep.Reason
		}
		return rep, rep.Status
	}, func(p any) report.CheckReport {
		msg := job.PanicMessage(job.KindCheck, p)
		return report.CheckReport{Status: report.StatusError, Reason: msg, Error: msg}.Normalize()
	})
}

// tagged returns events with every event tagged with j's id.
func tagged(j *job.Handle, events func(progress.Event)) func(progress.Event) {
	if events == nil {
		return nil
	}
	return func(e progress.Event) {
		e.Job = j.ID
		events(e)
	}
}

// checkEvents turns check hooks into check_start and check_end events.
func (s *Service) checkEvents(events func(progress.Event)) checkHooks {
	var ev checkHooks
	if events != nil {
		ev.OnStart = func(c config.Check) {
			events(progress.Event{Kind: progress.CheckStart, Time: s.opts.Now(), Check: c.Name})
		}
		ev.OnEnd = func(r report.CheckResult) {
			events(progress.Event{Kind: progress.CheckEnd, Time: s.opts.Now(), Check: r.Name, Status: r.Status, Error: r.Error, DurationMS: r.DurationMS})
		}
	}
	return ev
}

// Check runs the named checks: [Service.StartCheck], waited for.
func (s *Service) Check(ctx context.Context, name string, events func(progress.Event)) report.CheckReport {
	j, err := s.StartCheck(ctx, name, events)
	if err != nil {
		return report.CheckReport{Status: failure(err), Error: err.Error(), Reason: err.Error()}.Normalize()
	}
	rep, _ := j.Result()
	return rep
}

// editorChecks wraps runner with the editor rules of doc/design.md §9 when an editor
// is attached.
func (s *Service) editorChecks(runner *check.Runner) tools.CheckRunner {
	if s.opts.Editor == nil {
		return runner
	}
	return &verify.EditorChecks{Checks: runner, Editor: s.opts.Editor}
}

// ErrUndoUnavailable is returned by [Service.StartUndo] without a write
// journal.
var ErrUndoUnavailable = errors.New("undo is unavailable until the journal exists")

// StartUndo starts the undo of run runID (the workspace's last run when "")
// as a job. Without a journal it returns [ErrUndoUnavailable].
func (s *Service) StartUndo(ctx context.Context, runID string) (*job.Job[report.Undo], error) {
	if s.opts.Store == nil {
		return nil, ErrUndoUnavailable
	}
	return job.Start(&s.gate, ctx, job.KindUndo, func(ctx context.Context, _ *job.Job[report.Undo]) (report.Undo, string) {
		rep, _ := s.opts.Store.Undo(ctx, s.opts.FS, runID)
		return rep, rep.Status
	}, func(p any) report.Undo {
		return report.Undo{Status: report.StatusError, RunID: runID, Workspace: s.Config().Workspace, Error: job.PanicMessage(job.KindUndo, p)}.Normalize()
	})
}

// Undo undoes run runID: [Service.StartUndo], waited for.
func (s *Service) Undo(ctx context.Context, runID string) report.Undo {
	j, err := s.StartUndo(ctx, runID)
	if errors.Is(err, ErrUndoUnavailable) {
		cfg := s.Config()
		return report.Undo{Status: report.StatusUnavailable, Workspace: cfg.Workspace,
			Error: "undo is unavailable: the write journal could not be opened"}.Normalize()
	}
	if err != nil {
		cfg := s.Config()
		return report.Undo{Status: failure(err), Workspace: cfg.Workspace, RunID: runID, Error: err.Error()}.Normalize()
	}
	rep, _ := j.Result()
	return rep
}

// Status reports the configuration, the workspace's state and its last run.
// It never contacts the model.
func (s *Service) Status(ctx context.Context) report.Status {
	cfg := s.Config()
	st := statusOf(&cfg, s.opts.Version)
	st.Capabilities.FileIO = s.opts.FileIO
	if st.Capabilities.FileIO == "" && s.opts.Editor != nil {
		st.Capabilities.FileIO = FileIOEditor
	}
	st.Capabilities.Undo = s.opts.Store != nil
	if s.opts.Reviewer != nil {
		r := s.opts.Reviewer(&cfg)
		st.Reviewer = &r
	}
	st.Warnings = append(st.Warnings, s.opts.Warnings...)
	st.Warnings = append(st.Warnings, s.Onboarding(ctx)...)
	if s.opts.Editor != nil {
		// Status must stay quick (the MCP server answers it between
		// frames): a hung editor costs at most statusEditorTimeout here.
		limit := s.opts.EditorStatusTimeout
		if limit <= 0 {
			limit = statusEditorTimeout
		}
		ectx, cancel := context.WithTimeout(ctx, limit)
		st.Editor = s.opts.Editor.Status(ectx)
		cancel()
	}
	s.mu.Lock()
	st.Busy = s.gate.Current() != nil
	last := s.last
	s.mu.Unlock()
	if s.opts.Store != nil {
		if _, busy, err := s.opts.Store.Busy(); err == nil && busy {
			st.Busy = true
		}
		if r, err := s.opts.Store.LastReport(); err == nil && r != nil {
			last = r
		}
	}
	if last != nil {
		st.LastReport = lastReportSummary(last)
	}
	if err := s.opts.FS.CheckRoot(ctx); err != nil {
		st.Status = report.StatusStale
		st.Error = err.Error()
	}
	return st
}

// lastReportSummary is the compact form of a run report that status shows.
func lastReportSummary(r *report.Run) map[string]any {
	m := map[string]any{
		"run_id": r.RunID, "task": r.Task, "status": r.Status, "verified": r.Verified,
		"changed_files": r.ChangedFiles, "cycles": r.Cycles, "started_at": r.StartedAt,
		"duration_ms": r.DurationMS, "summary": text.Clip(r.Summary, 2001), "error": r.Error,
	}
	if r.Review != nil {
		// The person's review, beside the host's verdict (doc/design.md §12.7).
		m["review"] = r.Review
	}
	return m
}

// statusOf renders the configuration part of a status report.
func statusOf(cfg *config.Config, version string) report.Status {
	noEditor := "No editor bridge configured"
	st := report.Status{
		Status:    report.StatusOK,
		Version:   version,
		Workspace: cfg.Workspace,
		Trusted:   cfg.Trusted,
		Backend: report.Backend{
			Type: "ollama", API: cfg.Ollama.API, BaseURL: cfg.Ollama.BaseURL,
			Connectivity: "unverified", Note: "status does not contact the model",
		},
		Models:       ModelsOf(cfg),
		Editor:       report.Editor{Status: report.StatusUnavailable, Error: &noEditor},
		Warnings:     slices.Clone(cfg.Warnings),
		Capabilities: report.Capabilities{SingleWriter: true, ReadOnlyConcurrency: 1},
	}
	if cfg.ConfigPath != "" {
		p := cfg.ConfigPath
		st.ConfigPath = &p
	}
	for _, c := range cfg.Checks {
		st.Checks = append(st.Checks, report.CheckSummary{Name: c.Name, Required: c.Required, Kind: c.Kind, Filetypes: c.Filetypes})
	}
	return st.Normalize()
}

// ModelsOf names each role's model and server (doc/design.md §7.9).
func ModelsOf(cfg *config.Config) report.Models {
	server := func(role string) string { name, _, _ := cfg.ServerFor(role); return name }
	return report.Models{
		Planner:  cfg.ModelFor(config.RolePlanner),
		Coder:    cfg.ModelFor(config.RoleCoder),
		Reviewer: cfg.ModelFor(config.RoleReviewer),
		Servers: &report.RoleServers{
			Planner: server(config.RolePlanner), Coder: server(config.RoleCoder), Reviewer: server(config.RoleReviewer),
		},
	}
}

// Models lists the installed models.
func (s *Service) Models(ctx context.Context) ([]model.ModelInfo, error) {
	if s.opts.Catalog == nil {
		return nil, errors.New("no model catalog configured")
	}
	return s.opts.Catalog.ListModels(ctx)
}

// SetModel makes every role use name. It is refused with the busy error
// while a job is in progress (the job keeps the model it started with).
func (s *Service) SetModel(name string) error {
	if err := s.gate.Busy(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.UseModel(name)
	return nil
}

// Busy returns the busy error while a job of this process is in progress,
// else nil.
func (s *Service) Busy() error { return s.gate.Busy() }

// ToolNames lists the tools the coder is offered.
func (s *Service) ToolNames() []string {
	cfg := s.Config()
	reg := tools.New(s.opts.FS, tools.Options{Trusted: cfg.Trusted, Checks: s.checkRunner(&cfg, checkHooks{})})
	var names []string
	for _, t := range reg.Schemas(config.RoleCoder) {
		names = append(names, t.Name)
	}
	return names
}

// onboardingTimeout bounds the workspace listing of the onboarding
// warnings (status must stay quick; an editor FS lists over RPC).
const onboardingTimeout = 2 * time.Second

// Onboarding returns the warnings a new user needs before a run can ever
// be verified (see verify.Onboarding): no configuration file, no required
// check, a language in the workspace that no lint check covers, a
// workspace at / or the home directory. The languages come from a bounded
// listing of the workspace.
func (s *Service) Onboarding(ctx context.Context) []string {
	cfg := s.Config()
	var files []string
	if s.opts.FS != nil {
		lctx, cancel := context.WithTimeout(ctx, onboardingTimeout)
		if l, err := s.opts.FS.List(lctx, "."); err == nil {
			files = l.Files
		}
		cancel()
	}
	return verify.Onboarding(&cfg, files, s.opts.Home, s.opts.UserFile)
}
