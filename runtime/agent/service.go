package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/runtime/check"
	"flow/runtime/config"
	"flow/runtime/journal"
	"flow/runtime/model"
	"flow/runtime/report"
	"flow/runtime/tools"
	"flow/runtime/verify"
)

// statusEditorTimeout bounds the editor probe of a status report by default.
const statusEditorTimeout = 5 * time.Second

// ServiceOptions are the collaborators of a [Service].
type ServiceOptions struct {
	// FS is the workspace file system: a bufferfs.Disk, or the buffer-aware
	// editor FS inside Neovim. Required.
	FS bufferfs.FS
	// Backend is the model server. Required for runs.
	Backend model.Backend
	// Catalog lists installed models (/models, /model, doctor); optional.
	Catalog model.Catalog
	// Store is the workspace's journal (undo, history, cross-process lock).
	// nil disables undo and history; runs still work.
	Store *journal.Store
	// Version is flow's version, for the status report.
	Version string
	// FileIO names the file I/O mode for the status report.
	FileIO string
	// Editor, when set, describes the attached editor in status reports.
	Editor func(ctx context.Context) report.Editor
	// EditorStatusTimeout bounds Editor; 0 means 5 s.
	EditorStatusTimeout time.Duration
	// Tools, when set, builds the toolbox of a run (to add editor tools).
	Tools func(opts tools.Options) Toolbox
	// EditorEvidence gathers editor coverage evidence; nil without an editor.
	EditorEvidence verify.EditorEvidence
	// EditorState, when set, probes the attached editor's freshness API:
	// checks then refuse to run over unsaved buffers and become stale when
	// the editor changes meanwhile (verify.EditorChecks), and a run's
	// verification becomes stale when the editor changes during review.
	EditorState verify.EditorState
	// Warnings are added to the configuration's warnings in status reports.
	Warnings []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Service is the runtime every front end shares (CLI, MCP server, Neovim
// host, TUI): runs, checks, status, undo and model selection over one
// workspace, with the single-writer rule inside the process and the journal's
// lock across processes.
type Service struct {
	opts ServiceOptions

	mu   sync.Mutex
	cfg  config.Config
	busy string // what holds the writer slot ("run", "check", "undo"), or ""
	last *report.Run
}

// NewService returns a Service for cfg. The configuration is copied; use
// [Service.SetModel] to change the model later.
func NewService(cfg *config.Config, opts ServiceOptions) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{opts: opts, cfg: *cfg}
}

// Config returns a copy of the current configuration.
func (s *Service) Config() config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// acquire takes the in-process writer slot and the workspace lock. The
// returned release must be called when the work is done.
func (s *Service) acquire(what string) (release func(), err error) {
	s.mu.Lock()
	if s.busy != "" {
		holder := s.busy
		s.mu.Unlock()
		return nil, fmt.Errorf("busy: a %s is already in progress in this flow process", holder)
	}
	s.busy = what
	s.mu.Unlock()
	free := func() {
		s.mu.Lock()
		s.busy = ""
		s.mu.Unlock()
	}
	if s.opts.Store == nil {
		return free, nil
	}
	lock, err := s.opts.Store.Lock()
	if err != nil {
		free()
		return nil, err
	}
	return func() {
		_ = lock.Unlock()
		free()
	}, nil
}

// busyStatus maps an acquire error to a report status.
func busyStatus(err error) string {
	if errors.Is(err, journal.ErrBusy) || strings.HasPrefix(err.Error(), "busy:") {
		return report.StatusBusy
	}
	return report.StatusError
}

// checkRunner builds the named-check runner for the current configuration.
func (s *Service) checkRunner(cfg *config.Config) *check.Runner {
	return &check.Runner{Root: cfg.Workspace, Trusted: cfg.Trusted, Checks: cfg.Checks, Fresh: s.opts.FS.CheckRoot}
}

// Run runs task and returns its report. events, when non-nil, receives the
// run's progress events synchronously.
func (s *Service) Run(ctx context.Context, task string, events func(Event)) report.Run {
	cfg := s.Config()
	release, err := s.acquire("run")
	if err != nil {
		return report.Run{Status: busyStatus(err), Task: task, Workspace: cfg.Workspace, Error: err.Error(),
			Roles: []report.Role{}, Events: []report.ToolEvent{}, ChangedFiles: []string{}, Checks: []report.CheckResult{},
			VerificationHistory: []report.Verification{}}
	}
	defer release()

	runID := journal.NewRunID(s.opts.Now())
	var jr *journal.Run
	// Every run is recorded, read-only ones too: its report becomes the
	// workspace's history, and undo of a run that wrote nothing says so.
	if s.opts.Store != nil {
		if jr, err = s.opts.Store.Begin(runID, task); err != nil {
			return report.Run{Status: report.StatusError, Task: task, RunID: runID, Workspace: cfg.Workspace,
				Error: fmt.Sprintf("cannot start the write journal (undo): %v", err),
				Roles: []report.Role{}, Events: []report.ToolEvent{}, ChangedFiles: []string{}, Checks: []report.CheckResult{},
				VerificationHistory: []report.Verification{}}
		}
		defer jr.Close()
	}
	runner := s.checkRunner(&cfg)
	deps := Deps{
		Backend: s.opts.Backend, FS: s.opts.FS, Checks: s.editorChecks(runner), Events: events,
		Editor: s.opts.EditorEvidence, EditorState: s.opts.EditorState, Now: s.opts.Now, RunID: runID,
	}
	if jr != nil {
		deps.BeforeWrite = jr.BeforeWrite
	}
	deps.Originals = verify.NewOriginals()
	deps.BeforeWrite = deps.Originals.Hook(deps.BeforeWrite)
	if s.opts.Tools != nil {
		deps.Tools = s.opts.Tools(tools.Options{Trusted: cfg.Trusted, Checks: deps.Checks, BeforeWrite: deps.BeforeWrite})
	}
	ag := New(&cfg, deps)
	runner.OnStart, runner.OnEnd = ag.OnCheckStart, ag.OnCheckEnd
	rep := ag.Run(ctx, task)
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

// Check runs the named checks (all when name is ""); events, when non-nil,
// receives check_start and check_end events.
func (s *Service) Check(ctx context.Context, name string, events func(Event)) report.CheckReport {
	cfg := s.Config()
	release, err := s.acquire("check")
	if err != nil {
		return report.CheckReport{Status: busyStatus(err), Checks: []report.CheckResult{}, Error: err.Error(), Reason: err.Error()}
	}
	defer release()
	runner := s.checkRunner(&cfg)
	if events != nil {
		runner.OnStart = func(c config.Check) {
			events(Event{Kind: EventCheckStart, Time: s.opts.Now(), Check: c.Name})
		}
		runner.OnEnd = func(r report.CheckResult) {
			events(Event{Kind: EventCheckEnd, Time: s.opts.Now(), Check: r.Name, Status: r.Status, Error: r.Error, DurationMS: r.DurationMS})
		}
	}
	return s.editorChecks(runner).Run(ctx, name)
}

// editorChecks wraps runner with the editor rules of SPEC §9 when an editor
// is attached.
func (s *Service) editorChecks(runner *check.Runner) tools.CheckRunner {
	if s.opts.EditorState == nil {
		return runner
	}
	return &verify.EditorChecks{Checks: runner, Editor: s.opts.EditorState}
}

// Undo undoes run runID (the workspace's last run when "").
func (s *Service) Undo(ctx context.Context, runID string) journal.UndoReport {
	cfg := s.Config()
	if s.opts.Store == nil {
		return journal.UndoReport{Status: report.StatusUnavailable, Workspace: cfg.Workspace,
			Restored: []string{}, Removed: []string{}, Unchanged: []string{}, Conflicts: []journal.Conflict{},
			Error: "undo is unavailable: the write journal could not be opened"}
	}
	release, err := s.acquire("undo")
	if err != nil {
		return journal.UndoReport{Status: busyStatus(err), Workspace: cfg.Workspace, RunID: runID,
			Restored: []string{}, Removed: []string{}, Unchanged: []string{}, Conflicts: []journal.Conflict{},
			Error: err.Error()}
	}
	defer release()
	rep, _ := s.opts.Store.Undo(ctx, s.opts.FS, runID)
	return rep
}

// Status reports the configuration, the workspace's state and its last run.
// It never contacts the model.
func (s *Service) Status(ctx context.Context) report.Status {
	cfg := s.Config()
	st := StatusOf(&cfg, s.opts.Version)
	st.Capabilities.FileIO = s.opts.FileIO
	st.Capabilities.Undo = s.opts.Store != nil
	st.Warnings = append(st.Warnings, s.opts.Warnings...)
	if s.opts.Editor != nil {
		// Status must stay quick (the MCP server answers it between
		// frames): a hung editor costs at most statusEditorTimeout here.
		limit := s.opts.EditorStatusTimeout
		if limit <= 0 {
			limit = statusEditorTimeout
		}
		ectx, cancel := context.WithTimeout(ctx, limit)
		st.Editor = s.opts.Editor(ectx)
		cancel()
	}
	s.mu.Lock()
	st.Busy = s.busy != ""
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
		st.LastReport = LastReportSummary(last)
	}
	if err := s.opts.FS.CheckRoot(ctx); err != nil {
		st.Status = report.StatusStale
		st.Error = err.Error()
	}
	return st
}

// LastReportSummary is the compact form of a run report that status shows.
func LastReportSummary(r *report.Run) map[string]any {
	return map[string]any{
		"run_id": r.RunID, "task": r.Task, "status": r.Status, "verified": r.Verified,
		"changed_files": r.ChangedFiles, "cycles": r.Cycles, "started_at": r.StartedAt,
		"duration_ms": r.DurationMS, "summary": truncateRunes(r.Summary, 2000), "error": r.Error,
	}
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// StatusOf renders the configuration part of a status report.
func StatusOf(cfg *config.Config, version string) report.Status {
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
		Models: report.Models{
			Planner:  cfg.ModelFor(config.RolePlanner),
			Coder:    cfg.ModelFor(config.RoleCoder),
			Reviewer: cfg.ModelFor(config.RoleReviewer),
		},
		Checks:       []report.CheckSummary{},
		Editor:       report.Editor{Status: report.StatusUnavailable, Tools: []string{}, Error: &noEditor},
		Warnings:     slices.Clone(cfg.Warnings),
		Capabilities: report.Capabilities{SingleWriter: true, ReadOnlyConcurrency: 1},
	}
	if st.Warnings == nil {
		st.Warnings = []string{}
	}
	if cfg.ConfigPath != "" {
		p := cfg.ConfigPath
		st.ConfigPath = &p
	}
	for _, c := range cfg.Checks {
		ft := c.Filetypes
		if ft == nil {
			ft = []string{}
		}
		st.Checks = append(st.Checks, report.CheckSummary{Name: c.Name, Required: c.Required, Kind: c.Kind, Filetypes: ft})
	}
	return st
}

// Models lists the installed models.
func (s *Service) Models(ctx context.Context) ([]model.ModelInfo, error) {
	if s.opts.Catalog == nil {
		return nil, errors.New("no model catalog configured")
	}
	return s.opts.Catalog.ListModels(ctx)
}

// SetModel makes every role use name.
func (s *Service) SetModel(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Ollama.Model = name
	s.cfg.Models = config.Models{}
}

// ToolNames lists the tools the coder is offered.
func (s *Service) ToolNames() []string {
	cfg := s.Config()
	reg := tools.New(s.opts.FS, tools.Options{Trusted: cfg.Trusted, Checks: s.checkRunner(&cfg)})
	var names []string
	for _, t := range reg.Schemas(config.RoleCoder) {
		names = append(names, t.Name)
	}
	return names
}
