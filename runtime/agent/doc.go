// Package agent is flow's runtime service and the bounded planner → coder →
// reviewer workflow behind it (SPEC §7): one read-only planning role, then
// up to max_cycles cycles of a coder, host verification and a read-only
// reviewer, each role in a fresh conversation with an embedded system
// prompt, every budget enforced by the host, and "verified" computed from
// evidence (package verify), never from what the model says. Progress is
// reported as typed [Event]s.
//
// # One layer
//
// [Service] is the package's API and every front end's (CLI, MCP server,
// Neovim host, TUI): it owns the configuration, the journal, the attached
// editor and the job gate, and starts runs, checks and undos as jobs of
// runtime/job (StartRun, StartCheck, StartUndo; Run, Check and Undo wait for
// them). The workflow loop underneath is unexported: it is built per run
// from what the service holds, and everything a run needs, its event sink
// included, is given to that run. Nothing is patched into it after
// construction: the run's check runner is built by the run itself with the
// run's own check hooks, which is why the loop keeps no "current run" and
// needs no lock for one. Earlier, the service and an exported Agent each
// had an option struct describing the same collaborators, rebuilt per run,
// and "Editor" meant a status function in one and coverage evidence in the
// other; the service's options now name each collaborator once (one
// editor.Session for everything editor related).
package agent
