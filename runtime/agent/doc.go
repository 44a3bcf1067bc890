// Package agent is flow's runtime service and the bounded planner → coder →
// reviewer workflow behind it (doc/design.md §6): one read-only planning
// role, then up to max_cycles cycles of a coder, host verification and a
// read-only reviewer, each role in a fresh conversation with an embedded
// system prompt, every budget enforced by the host, and "verified"
// computed from evidence (package verify), never from what the model says.
// Progress is reported as the typed events of package progress.
//
// # The service
//
// [Service] is the package's API and every front end's (CLI, MCP server,
// Neovim host, TUI): it owns the configuration, the journal, the attached
// editor and the job gate, and starts runs, checks and undos as jobs of
// runtime/job (StartRun, StartCheck, StartUndo; Run, Check and Undo wait
// for them), each with its report's type. The workflow loop underneath is
// unexported: it is built per run from what the service holds, and
// everything a run needs, its event sink included, is given to that run;
// the run builds its own check runner with its own hooks, so the loop
// keeps no "current run" and needs no lock for one.
//
// # The role loop
//
// A role invocation is one generic turn pipeline (role.go, turn.go,
// toolcall.go): a request built from the role's policy (policy.go, the one
// place the roles differ), the model call, an ordered list of extractors
// of the reply's tool calls (native, text, answer code), the calls'
// admission and execution, then an ordered list of after-turn rules
// (rules.go) that may each end the role with a typed cause (ending.go),
// add a message, or let the turn go on. A run's state is kept apart from
// its report: roles return outcomes, one recorder (recorder.go) keeps the
// report's events and counts and emits each as its live event, and the
// report is assembled once, when the run ends.
package agent
