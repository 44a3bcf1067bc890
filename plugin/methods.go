package plugin

// RPC methods served by the `flow nvim` host. This list and the Lua table
// require("flow.rpc").methods are one contract; a test that runs a real
// Neovim checks that they are equal.
const (
	// MethodConfigure exchanges settings when the host starts:
	// flow_configure(opts) → {version, workspace, trusted, problems}.
	MethodConfigure = "flow_configure"
	// MethodRun starts a run: flow_run(task, token?) → {status:"started",
	// token} or {status:"busy"}. token is the client's name for the job,
	// echoed in every push for it; without one the job's id is used.
	MethodRun = "flow_run"
	// MethodCheck starts named checks: flow_check(name|"", token?) → {token}.
	MethodCheck = "flow_check"
	// MethodStatus returns the status report: flow_status() → report.
	MethodStatus = "flow_status"
	// MethodStop cancels every running job: flow_stop() → {stopped}.
	MethodStop = "flow_stop"
	// MethodUndo starts an undo: flow_undo(run_id|"", token?) → {token}.
	MethodUndo = "flow_undo"
	// MethodReview lists a finished run's hunks and applies decisions:
	// flow_review(run_id|"", keep, revert) → report.ReviewReport. keep and
	// revert are lists of selectors (hunk ids, changed files' paths, "all");
	// both empty only lists. It answers when the review is done, the
	// reverted lines already in the buffers (the host writes through the
	// buffer-aware file system).
	MethodReview = "flow_review"
)

// Methods lists every RPC method of the host, sorted.
var Methods = []string{
	MethodCheck,
	MethodConfigure,
	MethodReview,
	MethodRun,
	MethodStatus,
	MethodStop,
	MethodUndo,
}

// luaEvent is the fixed Lua string the host evaluates to push a job's
// progress and result to Neovim; the payload travels as the RPC argument.
const luaEvent = "return require('flow.rpc').on_event(...)"
