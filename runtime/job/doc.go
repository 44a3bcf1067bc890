// Package job is flow's one job system: the single-writer rule (one run,
// check or undo at a time per workspace, doc/design.md §2), job ids,
// cancellation and "busy", owned by the runtime so that every front end
// (the CLI, the MCP server, the Neovim host, the TUI) only translates.
//
// A [Gate] holds the slot: [Start] either returns a [*Job] (id, cancel,
// done, a typed result) or a [*BusyError] that matches [ErrBusy] with
// errors.Is and carries the holder, and [Gate.CancelAll] stops whatever
// runs (:FlowStop, shutdown). The sentence a user reads when flow is busy
// is [BusyError.Error], the same in every front end. A job's report has
// its kind's type (a run's is a report.Run); a front end that treats
// every kind alike holds the job's [Handle].
//
// The gate also takes the workspace's cross-process lock (the journal's
// flock) through [Gate.Lock], after the in-process slot and before the
// work starts, so that a second flow process is refused with the same
// error, naming the holder's pid, before anything has begun.
//
// The package is a leaf (standard library only): what a job does and what
// its report is are the caller's business.
package job
