package agent

// Messages of budget exhaustion and failures. Those shared with the
// reference program (doc/design.md §6.1) are kept verbatim: front ends and
// clients match on them.
const (
	MsgIterationBudget = "Role iteration budget exhausted"
	MsgToolCallBudget  = "Tool call budget exhausted"
	MsgContextBudget   = "Context budget exhausted"
	MsgBackendFailure  = "Backend/protocol failure: "
	MsgReviewerVerdict = "Reviewer must return a structured JSON verdict"
	// MsgEmptyReply is the cause named when the model answered with neither
	// text nor a tool call, twice in a row (the second time after being
	// told): what a real server hands on when the model's tool call did not
	// parse.
	MsgEmptyReply = "empty reply from the model (its tool call may have been malformed)"
	// MsgStuck ends a role whose model made a turn of calls that had each
	// failed twice before in the role.
	MsgStuck = "the model kept making the same failing tool calls (each failed three times)"
	// MsgRepeating ends a role whose model repeated its previous turn's
	// calls again after it was told that this ends its turn.
	MsgRepeating = "the model kept repeating its previous tool calls after it was told their results"
	MsgCancelled = "cancelled"
	// MsgContextOverflow starts every context_overflow error.
	MsgContextOverflow = "context_overflow: "
	// ReasonCancelled ends a cancelled run.
	ReasonCancelled = "The run was cancelled; edits already written remain (flow undo reverts them)"
	ReasonReadOnly  = "The workspace is read-only, so the plan was not carried out: run again with --trusted to edit and verify"
	ReasonRejected  = "Reviewer rejected the change"
	// ReasonNoEvidenceAfterAsking ends a run whose checks all pass but
	// show nothing, after the coder was asked once for a test that does.
	ReasonNoEvidenceAfterAsking = "No check shows the change, even after the coder was asked for a test that does: " +
		"the result is not verified; review the diff yourself, or add a test that fails without the change and run flow check " +
		"(for a change that should alter no behaviour, set [verify] behaviour_preserving = true or run with --behaviour-preserving)"
)

// Limits of doc/design.md §15 and of the summaries handed to the model.
const (
	maxSummaryChars     = 16000 // role summary
	maxToolResultChars  = 40000 // one tool message
	maxRepairChars      = 8000  // the repair summary of a repair cycle
	maxReviewerEvidence = 8000  // the verification summary given to the reviewer
	repairInstruction   = "Repair the concrete failures listed here. Do not change trust or configuration."
	// repairNoChange replaces repairInstruction while the run has changed
	// no file, whatever the last coder's summary claimed.
	repairNoChange = "No file has changed in this run: the last answer only described a change. Make the change now with file_edit (or file_write), then run flow_check. Do not change trust or configuration."
	// repairNoChangeWhole is repairNoChange for a coder in the whole-file
	// format (doc/design.md §6.7), whose instructions ask for files, not
	// tool calls.
	repairNoChangeWhole = "No file has changed in this run: the last answer only described a change. Make the change now: give the complete new content of each file you change, its path on a line of its own and then the whole file in a fenced code block. Do not change trust or configuration."
	// repairEvidence replaces repairInstruction, once, when every check
	// passed but none shows the change (doc/design.md §8.7), with the test
	// files named when flow knows them (evidenceInstruction).
	repairEvidence = "Every check passes, but none shows that the task is done: they passed before this run too. " +
		"Add or extend a test " + evidenceWhere + " that fails on the code as it was before your change and passes now, then run flow_check. " +
		"Keep your change; do not change trust or configuration."
	// evidenceWhere says where the test goes when no test file is named.
	evidenceWhere = "(in the project's test files)"
	// msgReviewSkipped is the skipped reviewer's summary.
	msgReviewSkipped = "Not asked: the host's verification did not pass, so this cycle cannot verify"
	// msgReviewedBefore is the summary of a reviewer not asked again about
	// files it rejected in cycle %d.
	msgReviewedBefore = "Not asked again: the changed files are exactly as they were when the reviewer rejected them in cycle %d"
)
