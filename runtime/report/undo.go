package report

// StatusConflict is the status of an undo that left some files untouched
// because they changed after the run.
const StatusConflict = "conflict"

// Undo is the report of an undo (`flow undo`, `:FlowUndo`, the TUI's
// /undo): what was given back, removed, already unchanged or left alone.
type Undo struct {
	// Status is "ok" when every journalled file is back to its state before
	// the run (restored, removed or already unchanged), or there was nothing
	// left to undo; "conflict" when some files changed after the run and were
	// left untouched; "unverified" when the workspace has no run to undo;
	// "error" when the run is unknown or something failed; "busy" or
	// "unavailable" when no undo could start.
	Status string `json:"status"`
	// RunID is the run undone (the last run when none was named).
	RunID     string `json:"run_id"`
	Workspace string `json:"workspace"`
	// Restored lists files given back their old content and mode.
	Restored []string `json:"restored"`
	// Removed lists files the run had created and undo deleted.
	Removed []string `json:"removed"`
	// Unchanged lists files that already had their state before the run
	// (the run was stopped before writing them, or they were reverted).
	Unchanged []string `json:"unchanged"`
	// Conflicts lists files left untouched, with the reason.
	Conflicts []Conflict `json:"conflicts"`
	// Diffs shows what the undo gave back: for each restored or removed
	// file, the diff from its content before the undo to its content after.
	Diffs []FileDiff `json:"diffs"`
	// AlreadyUndone is true when an earlier undo completed for this run.
	AlreadyUndone bool `json:"already_undone"`
	// Message says in one sentence what happened.
	Message string `json:"message"`
	// Error is the failure behind status "error".
	Error string `json:"error,omitempty"`
}

// Conflict is a file undo did not touch, or a review decision refused.
type Conflict struct {
	Path string `json:"path"`
	// Hunk is the review hunk refused (review reports only).
	Hunk   string `json:"hunk,omitempty"`
	Reason string `json:"reason"`
}
