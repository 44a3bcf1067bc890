package agent

import (
	"fmt"

	"flow/runtime/config"
	"flow/runtime/report"
)

// cause is why a role invocation ended (doc/design.md §6.6). Every way a
// role can end is one cause; its status, the role's error in the report
// and the run's reason sentence are each decided by one switch on it.
type cause int

const (
	// Ok endings.
	causeAnswered    cause = iota // answered without tool calls
	causeCodeApplied              // the coder's answer's code was applied
	causeRepeatDone               // the coder changed files, then only repeated its calls
	causeVerdict                  // the reviewer gave a verdict (approved or not)
	causeSkipped                  // the role did not run (the planner with agent.planner = "auto")

	// Unverified endings: a budget or a model that made no progress.
	causeIterationBudget // agent.max_iterations used up
	causeToolCallBudget  // agent.max_tool_calls used up
	causeContextBudget   // agent.max_context_chars exceeded
	causeStuck           // the same failing calls a third time
	causeRepeating       // repeated calls again after being told
	causeNoVerdict       // the reviewer's answer held no verdict

	// Error endings.
	causeEmptyReply      // an empty reply after the corrective retry
	causeBackend         // the model server failed
	causeContextOverflow // the prompt does not fit the model's context window
	causeSetup           // the role's prompt could not be built

	causeCancelled
)

// end is how a role invocation ended: its cause, and what the cause needs
// to be told (the server's error, why an empty reply ended the role, the
// overflow's figures).
type end struct {
	cause  cause
	detail string
	// summary, when set, replaces the role's summary (the last reply's
	// text): the plan, what the coder did.
	summary string
	// verdict is the reviewer's parsed verdict (causeVerdict only).
	verdict *reviewVerdict
	// empty says the reviewer's missing verdict came from empty replies
	// (causeNoVerdict only).
	empty bool
}

// emptyReplyAdvice ends the error of a role whose model replied empty.
const emptyReplyAdvice = "use a model whose tool calls this server parses (check `flow doctor`), or a lower temperature"

// status is the role's status for the cause.
func (e end) status() string {
	switch e.cause {
	case causeAnswered, causeCodeApplied, causeRepeatDone, causeVerdict:
		return report.StatusOK
	case causeSkipped:
		return report.StatusSkipped
	case causeIterationBudget, causeToolCallBudget, causeContextBudget, causeStuck, causeRepeating, causeNoVerdict:
		return report.StatusUnverified
	case causeCancelled:
		return report.StatusCancelled
	}
	return report.StatusError
}

// message is the role's error field in the report: the reference's fixed
// messages, which front ends and clients match on, kept verbatim.
func (e end) message() string {
	switch e.cause {
	case causeIterationBudget:
		return MsgIterationBudget
	case causeToolCallBudget:
		return MsgToolCallBudget
	case causeContextBudget:
		return MsgContextBudget
	case causeStuck:
		return MsgStuck
	case causeRepeating:
		return MsgRepeating
	case causeNoVerdict:
		if e.empty {
			return MsgReviewerVerdict + ": " + MsgEmptyReply
		}
		return MsgReviewerVerdict
	case causeEmptyReply:
		return MsgEmptyReply + ": " + e.detail + "; " + emptyReplyAdvice
	case causeBackend:
		return MsgBackendFailure + e.detail
	case causeContextOverflow:
		return MsgContextOverflow + e.detail
	case causeSetup:
		return e.detail
	case causeCancelled:
		return MsgCancelled
	}
	return ""
}

// reason is the run's one sentence for a role that ended this way: what
// happened and what to do about it.
func (e end) reason(cfg *config.Config, role string) string {
	switch e.cause {
	case causeCancelled:
		return ReasonCancelled
	case causeIterationBudget:
		return fmt.Sprintf("The %s used all %d of its turns (agent.max_iterations) without finishing: raise it or give a narrower task", role, cfg.Agent.MaxIterations)
	case causeToolCallBudget:
		return fmt.Sprintf("The run used all %d tool calls (agent.max_tool_calls) while the %s was working: raise it or give a narrower task", cfg.Agent.MaxToolCalls, role)
	case causeContextBudget:
		return fmt.Sprintf("The %s's conversation outgrew agent.max_context_chars (%d characters): raise it or give a narrower task", role, cfg.Agent.MaxContextChars)
	case causeContextOverflow:
		return fmt.Sprintf("The %s's prompt no longer fits the model's context window (%s)", role, e.detail)
	case causeNoVerdict:
		how := "it could not be read as a JSON verdict"
		if e.empty {
			how = "it was empty"
		}
		return fmt.Sprintf("The reviewer's reply was not a verdict (%s), so the change was not judged: run again, or use a model that follows JSON formats", how)
	case causeStuck:
		return fmt.Sprintf("The %s stopped because %s; its error did not lead it to a different call: run again, or use a larger model", role, MsgStuck)
	case causeRepeating:
		return fmt.Sprintf("The %s stopped because %s: run again, or use a larger model", role, MsgRepeating)
	case causeEmptyReply:
		return fmt.Sprintf("The %s got an %s", role, e.message())
	case causeBackend:
		return fmt.Sprintf("The model server failed while the %s was working: %s", role, e.detail)
	case causeSetup:
		return fmt.Sprintf("The %s stopped: %s", role, e.detail)
	}
	return fmt.Sprintf("The %s ended %s", role, e.status())
}

// outcome is one role invocation as the run sees it: the report's entry,
// assembled once when the role ended, and the typed end.
type outcome struct {
	report.Role
	end end
}

// ran reports whether the role ran (a cycle's reviewer does not always).
func (o outcome) ran() bool { return o.Role.Role != "" }

// reason is the run's sentence for a role that did not finish ok.
func (o outcome) reason(cfg *config.Config) string { return o.end.reason(cfg, o.Role.Role) }
