package agent

import (
	"fmt"
	"strings"

	"flow/runtime/config"
	"flow/runtime/report"
)

// The run's reasons: one sentence a person can act on for every way a run
// ends without being verified. A report that is not ok carries it as both
// its reason and its error (MCP hosts show the error). The roles keep the
// reference's fixed messages in their own error fields; these sentences
// name the role and what to do.
const (
	// ReasonCancelled ends a cancelled run.
	ReasonCancelled = "The run was cancelled; edits already written remain (flow undo reverts them)"
	// reasonNoChange leads when the coder changed nothing.
	reasonNoChange = "The coder made no change"
)

// roleReason is the sentence for a role that did not finish ok.
func roleReason(cfg *config.Config, st report.Role) string {
	role, e := st.Role, st.Error
	switch {
	case st.Status == report.StatusCancelled || e == MsgCancelled:
		return ReasonCancelled
	case e == MsgIterationBudget:
		return fmt.Sprintf("The %s used all %d of its turns (agent.max_iterations) without finishing: raise it or give a narrower task", role, cfg.Agent.MaxIterations)
	case e == MsgToolCallBudget:
		return fmt.Sprintf("The run used all %d tool calls (agent.max_tool_calls) while the %s was working: raise it or give a narrower task", cfg.Agent.MaxToolCalls, role)
	case e == MsgContextBudget:
		return fmt.Sprintf("The %s's conversation outgrew agent.max_context_chars (%d characters): raise it or give a narrower task", role, cfg.Agent.MaxContextChars)
	case strings.HasPrefix(e, MsgContextOverflow):
		return fmt.Sprintf("The %s's prompt no longer fits the model's context window (%s)", role, strings.TrimPrefix(e, MsgContextOverflow))
	case strings.HasPrefix(e, MsgReviewerVerdict):
		how := "it could not be read as a JSON verdict"
		if strings.Contains(e, MsgEmptyReply) {
			how = "it was empty"
		}
		return fmt.Sprintf("The reviewer's reply was not a verdict (%s), so the change was not judged: run again, or use a model that follows JSON formats", how)
	case e == MsgStuck:
		return fmt.Sprintf("The %s stopped because %s; its error did not lead it to a different call: run again, or use a larger model", role, MsgStuck)
	case e == MsgRepeating:
		return fmt.Sprintf("The %s stopped because %s: run again, or use a larger model", role, MsgRepeating)
	case strings.HasPrefix(e, MsgEmptyReply):
		return fmt.Sprintf("The %s got an %s", role, e)
	case strings.HasPrefix(e, MsgBackendFailure):
		return fmt.Sprintf("The model server failed while the %s was working: %s", role, strings.TrimPrefix(e, MsgBackendFailure))
	case e != "":
		return fmt.Sprintf("The %s stopped: %s", role, e)
	}
	return fmt.Sprintf("The %s ended %s", role, st.Status)
}

// rejectedReason is the sentence of a reviewer's rejection: its first issue,
// or its summary without issues.
func rejectedReason(st report.Role) string {
	for _, is := range st.Issues {
		if s := strings.TrimSpace(is); s != "" {
			return "The reviewer rejected the change: " + oneLine(s, 300)
		}
	}
	if s := strings.TrimSpace(st.Summary); s != "" {
		return "The reviewer rejected the change: " + oneLine(s, 300)
	}
	return ReasonRejected
}

// invalidTaskReason is the sentence of a task that cannot run.
func invalidTaskReason(cfg *config.Config, task string) string {
	if strings.TrimSpace(task) == "" {
		return "The task is empty: say what to change"
	}
	return fmt.Sprintf("The task is longer than agent.max_task_chars (%d characters): shorten it or raise the limit", cfg.Agent.MaxTaskChars)
}

// settle makes the report's reason and error agree: a report that is not
// ok has a sentence in both (the reason when there is one, else the
// error); an ok report has neither.
func settle(rep *report.Run) {
	if rep.Status == report.StatusOK {
		rep.Reason, rep.Error = "", ""
		return
	}
	if rep.Reason == "" {
		rep.Reason = rep.Error
	}
	if rep.Reason == "" {
		rep.Reason = "The run ended " + rep.Status
	}
	rep.Error = rep.Reason
}
