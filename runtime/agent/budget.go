package agent

import (
	"unicode/utf8"

	"flow/runtime/model"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// Messages of budget exhaustion and failures. Those shared with the
// reference program (reference §6) are kept verbatim: front ends and
// clients match on them.
const (
	MsgInvalidTask     = "Invalid or oversized task"
	MsgIterationBudget = "Role iteration budget exhausted"
	MsgToolCallBudget  = "Tool call budget exhausted"
	MsgContextBudget   = "Context budget exhausted"
	MsgBackendFailure  = "Backend/protocol failure: "
	MsgReviewerVerdict = "Reviewer must return a structured JSON verdict"
	// MsgEmptyReply is the cause named when the model answered with neither
	// text nor a tool call, twice in a row (the second time after being
	// told): what a real server hands on when the model's tool call did not
	// parse.
	MsgEmptyReply     = "empty reply from the model (its tool call may have been malformed)"
	MsgPlanningFailed = "Planning failed"
	// MsgStuck ends a role whose model made a turn of calls that had each
	// failed twice before in the role.
	MsgStuck = "the model kept making the same failing tool calls (each failed three times)"
	// MsgRepeating ends a role whose model repeated its previous turn's
	// calls again after it was told that this ends its turn.
	MsgRepeating      = "the model kept repeating its previous tool calls after it was told their results"
	MsgCancelled      = "cancelled"
	ReasonReadOnly    = "The workspace is read-only, so the plan was not carried out: run again with --trusted to edit and verify"
	ReasonRejected    = "Reviewer rejected the change"
	ReasonFingerprint = verify.ReasonFingerprint
)

// Limits of SPEC §16 and of the summaries handed to the model.
const (
	maxSummaryChars     = 16000 // role summary
	maxToolResultChars  = 40000 // one tool message
	maxRepairChars      = 8000  // the repair summary of a repair cycle
	maxReviewerEvidence = 8000  // the verification summary given to the reviewer
	repairInstruction   = "Repair the concrete failures listed here. Do not change trust or configuration."
	// repairNoChange replaces repairInstruction while the run has changed
	// no file, whatever the last coder's summary claimed.
	repairNoChange = "No file has changed in this run: the last answer only described a change. Make the change now with file_edit (or file_write), then run flow_check. Do not change trust or configuration."
)

// contextMeter tracks the size of a conversation as the character count of
// the JSON text of its message list plus the JSON text of the offered tool
// schemas (SPEC §7). JSON is produced without HTML or non-ASCII escaping, and
// characters are Unicode code points, so non-ASCII text is not inflated.
type contextMeter struct {
	limit int
	tools int // characters of the tool schemas
	msgs  int // characters of the messages, without brackets and commas
	n     int // number of messages
}

// newContextMeter returns a meter for a conversation offering tools.
func newContextMeter(limit int, tools []model.Tool) *contextMeter {
	m := &contextMeter{limit: limit}
	if len(tools) > 0 {
		m.tools = jsonChars(tools)
	}
	return m
}

// add accounts for one more message.
func (m *contextMeter) add(msg model.Message) {
	m.msgs += jsonChars(msg)
	m.n++
}

// total is the character count of `[msg,msg,...]` plus the schemas.
func (m *contextMeter) total() int {
	t := 2 + m.msgs + m.tools
	if m.n > 1 {
		t += m.n - 1
	}
	return t
}

// exceeded reports whether the conversation is over the budget.
func (m *contextMeter) exceeded() bool { return m.total() > m.limit }

// jsonChars returns the number of characters of v's JSON text.
func jsonChars(v any) int {
	b, err := report.Marshal(v)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b)
}

// truncateChars cuts s to at most n characters (code points).
func truncateChars(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n { // byte length bounds the character count
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// tailChars returns the last n characters of s.
func tailChars(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	skip := count - n
	i := 0
	for k := range s {
		if i == skip {
			return s[k:]
		}
		i++
	}
	return ""
}
