package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/progress"
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
	// Backend is the chat model server of [ollama], the default. Required.
	Backend model.Backend
	// Servers are the clients of the [servers.NAME] tables, by name. A
	// role's requests go to its server's client only: a run whose role
	// names a server without one is refused before any call, never sent
	// to Backend (doc/design.md §7.9).
	Servers map[string]model.Backend
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
	// editor snapshot make the verification stale (doc/design.md §8.5, §12.4).
	EditorState verify.EditorState
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// RunID, when non-empty, is the id of the next run (the journal names
	// its records with it before the run starts); else one is generated.
	RunID string
	// Transcript, when set (agent.transcript), records each model call (a
	// transcriptEntry) in the run's journal. Its first error is a warning
	// event and a note on that call's report event; the run goes on.
	Transcript func(entry any) error
}

// checkHooks are the hooks a run's check runner calls around each check.
type checkHooks struct {
	OnStart func(c config.Check)
	OnEnd   func(r report.CheckResult)
}

// env is a run as its role invocations see it (doc/design.md §6.6): the
// configuration and collaborators, the run's toolbox and recorder, the
// progress sink, the context window's estimate and the files changed so
// far. The turn pipeline reads and writes only this; what the run keeps
// for itself (the plan, the cycles' outcomes, the conclusion) is run's.
type env struct {
	cfg   *config.Config
	deps  *loopDeps
	tools toolbox
	id    string // the run's id, stamped on every event
	task  string
	rec   *recorder
	// events is the run's progress sink; nil when nobody listens.
	events  func(progress.Event)
	windows map[string]*window // the prompt budget of each server's model's context window
	// format is how the coder edits and where the tools are declared,
	// resolved once when the run is set up.
	format  formatChoice
	changed map[string]bool
	// failing are the required checks that failed when the host last ran
	// them (the baseline, then each cycle's verification), for the
	// coder's reminder when it changes nothing (rules.go).
	failing []string
	// transcriptOff: recording the transcript failed once; no more is
	// recorded.
	transcriptOff bool
	// beforeTurn are the run's before-turn rules (beforeturn.go), with
	// their state, made when the run starts.
	beforeTurn []beforeTurnRule
	writes     int // file changes made by tools, each edit of a file counted
	cycles     int // the cycle under way (0 for the planner)
	invoked    int // role invocations so far (the k of synthesised call ids)
	// edit is the current tool call's write, for its event's diff.
	edit editCapture
	// hostEdits are the changes the host made to files itself (mended
	// imports), for the report.
	hostEdits []report.HostEdit

	mu    sync.Mutex // guards phase and serialises events
	phase string
}

// formatChoice is the run's choice of the coder's edit format and of where
// the tools are declared (doc/design.md §6.7): made once when the run is
// set up, with the sentence that says why for the report.
type formatChoice struct {
	// edit is config.EditTools or config.EditWhole ("" until resolved).
	edit, editWhy string
	// nativeTools: the tools are declared in each request's tools field
	// as well as in the system prompt (agent.tool_declarations); false:
	// in the system prompt alone, as text.
	nativeTools bool
	toolsWhy    string
}

// unfinished: the host itself knows that the task is not done — no file
// has changed in the run, or a required check failed when the host last
// ran it. A coder that gives back a change whose checks pass, rejected
// only by the reviewer's word, may be right to (doc/design.md §6.6).
func (r *env) unfinished() bool {
	return len(r.changed) == 0 || len(r.failing) > 0
}

// setPhase records what the run is doing, for check events.
func (r *env) setPhase(p string) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
}

// emit stamps a run event and hands it to the run's sink.
func (r *env) emit(e progress.Event) {
	if r.events == nil {
		return
	}
	e.RunID = r.id
	if e.Time.IsZero() {
		e.Time = r.deps.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Role == "" && (e.Kind == progress.CheckStart || e.Kind == progress.CheckEnd) {
		e.Role = r.phase
	}
	r.events(e)
}

// contextWindow returns the window of model m on role's server in this
// run, made (and the server asked about it) before its first call. One
// model on two servers has two windows.
func (r *env) contextWindow(ctx context.Context, role, m string) *window {
	name, o, _ := r.cfg.ServerFor(role)
	key := name + "\x00" + m
	if w := r.windows[key]; w != nil {
		return w
	}
	if r.windows == nil {
		r.windows = map[string]*window{}
	}
	w := probeWindow(ctx, o, r.backend(role), m)
	r.windows[key] = w
	return w
}

// backend returns the client of role's server: deps.Backend for
// [ollama], else the [servers.NAME] client (nil when there is none, which
// setup refuses before any call).
func (r *env) backend(role string) model.Backend {
	name, _, _ := r.cfg.ServerFor(role)
	if name == config.DefaultServer {
		return r.deps.Backend
	}
	return r.deps.Servers[name]
}

// missingServer returns the problem of a role whose server has no
// client, "" when every role's has one.
func (r *env) missingServer() string {
	for _, role := range config.Roles {
		if r.backend(role) == nil {
			name, _, _ := r.cfg.ServerFor(role)
			return fmt.Sprintf("the %s's server %q has no client: no [servers.%s] table reached the runtime; define it and name it in [roles.%s]", role, name, name, role)
		}
	}
	return ""
}
