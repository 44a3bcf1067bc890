// Package job is flow's one job system: the single-writer rule of SPEC §2
// and §11 (one run, check or undo at a time per workspace), job ids,
// cancellation and "busy", owned by the runtime so that every front end
// (the CLI, the MCP server, the Neovim host, the TUI) only translates.
//
// # Why one package
//
// The rule used to be built four times: the runtime service's writer slot,
// the MCP server's run slot, the Neovim host's job table and the TUI's job
// tracker. An MCP flow_run passed two gates, busy was recognised by the
// text of an error in one place, and every front end worded it
// differently. A [Gate] now holds the slot: [Gate.Start] either returns a
// [*Job] (id, cancel, done, result) or a [*BusyError] that matches
// [ErrBusy] with errors.Is and carries the holder, and [Gate.CancelAll]
// stops whatever runs (:FlowStop, shutdown). The sentence a user reads
// when flow is busy is [BusyError.Error], the same in every front end.
//
// The gate also takes the workspace's cross-process lock (the journal's
// flock) through [Gate.Lock], after the in-process slot and before the
// work starts, so that a second flow process is refused with the same
// error, naming the holder's pid, before anything has begun.
//
// The package is a leaf (standard library only): what a job does and what
// its result is are the caller's business.
package job
