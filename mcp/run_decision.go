package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/report"
)

// The question after an unverified run (doc/design.md §10.12): a plain
// flow_run that leaves a change flow did not verify asks a client that
// declared form-mode elicitation whether to keep the change, revert it or
// decide later, and applies the answer through the runtime's Review, as
// flow_review does; any other answer, or none, writes nothing. A
// task-augmented flow_run's worker cannot ask: the tasks/result that
// collects its result asks instead (task_decision.go).

// The answers a run's decision records.
const (
	answerKeep    = "keep"
	answerRevert  = "revert"
	answerLater   = "later"
	answerDecline = "decline"
	answerCancel  = "cancel"
	answerNone    = "none"
)

// decisionProperty is the one property of the question's form.
const decisionProperty = "decision"

// askDecision returns rep, a finished run's report, with the person's
// decision about its change when the session's client declared form-mode
// elicitation and rep is a run that left an unverified change with hunks
// still pending; any other report is returned as it is, and so is every
// report once ctx has ended (a cancelled call asks nothing). The question
// is one elicitation/create request, waited for at most the server's
// decision timeout and not past ctx; asking receives one line saying that
// the question is open, for the call's task record.
func (ss *session) askDecision(ctx context.Context, rep any, asking func(string)) any {
	run, ok := rep.(runWithHunks)
	if !ok || !ss.elicit || !needsDecision(run) || ctx.Err() != nil || ss.out.isShut() {
		return rep
	}
	wait := ss.srv.decisionWait
	ctx, cancel := context.WithTimeoutCause(ctx, wait, fmt.Errorf("flow waited %s for the answer", wait))
	defer cancel()
	ss.log.Info("asking the client about an unverified change", "run", run.RunID)
	asking(fmt.Sprintf("run %s ended (%s) with a change flow did not verify; waiting for the person to keep it, revert it or decide later", run.RunID, run.Status))
	raw, err := ss.peer.call(ctx, string(mcp.MethodElicitationCreate), decisionQuestion(run))
	answer, why := decisionAnswer(raw, err)
	ss.log.Info("the client's decision", "run", run.RunID, "answer", answer, "why", why)
	if answer != answerKeep && answer != answerRevert {
		run.Decision = &runDecision{Answer: answer, Message: fmt.Sprintf(
			"Nothing was decided: %s; the change stays as the run left it, and flow_review {\"run_id\": %q} keeps or reverts it.", why, run.RunID)}
		return run
	}
	return ss.applyDecision(run, answer)
}

// needsDecision reports whether a run left a change that flow did not
// verify and whose hunks no one has decided on yet.
func needsDecision(run runWithHunks) bool {
	if run.Verified || run.RunID == "" || len(run.ChangedFiles) == 0 {
		return false
	}
	for _, h := range run.Hunks {
		if h.State == report.HunkPending {
			return true
		}
	}
	return false
}

// decisionForm is the requestedSchema of the question: one string
// property, an enum of the three answers.
type decisionForm struct {
	Type       string                  `json:"type"`
	Properties map[string]decisionEnum `json:"properties"`
	Required   []string                `json:"required"`
}

type decisionEnum struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	Default     string   `json:"default"`
}

// decisionQuestion is the elicitation of a run's decision: a form-mode
// request (mode omitted, as 2025-06-18 clients expect) whose message names
// the run, its changed files and why it is not verified.
func decisionQuestion(run runWithHunks) mcp.ElicitationParams {
	msg := fmt.Sprintf("flow run %s changed %s, but the change is not verified: %s Keep the change, revert it, or decide later (flow_review)?",
		run.RunID, fileList(run.ChangedFiles), sentence(notVerifiedWhy(run.Run)))
	return mcp.ElicitationParams{
		Message: msg,
		RequestedSchema: decisionForm{
			Type: "object",
			Properties: map[string]decisionEnum{decisionProperty: {
				Type:        "string",
				Title:       "Decision",
				Description: "keep: keep every hunk of the change; revert: put the files back as they were; later: write nothing now.",
				Enum:        []string{answerKeep, answerRevert, answerLater},
				Default:     answerLater,
			}},
			Required: []string{decisionProperty},
		},
	}
}

// notVerifiedWhy is the run's reason, else its summary, else its status.
func notVerifiedWhy(run report.Run) string {
	for _, s := range []string{run.Reason, run.Summary} {
		if s = strings.TrimSpace(s); s != "" {
			return text.ClipBytes(s, 400)
		}
	}
	return "its status is " + run.Status
}

// sentence ends s with a full stop unless it ends a sentence already.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// fileList names up to three files, then how many more: "a.txt and b.txt",
// "a, b, c and 2 more files".
func fileList(files []string) string {
	shown := files
	if len(files) > 3 {
		shown = files[:3]
	}
	switch rest := len(files) - len(shown); {
	case rest > 0:
		return strings.Join(shown, ", ") + fmt.Sprintf(" and %s more", text.Count(rest, "file"))
	case len(shown) == 1:
		return shown[0]
	default:
		return strings.Join(shown[:len(shown)-1], ", ") + " and " + shown[len(shown)-1]
	}
}

// decisionAnswer reads the client's answer to the question, or the error
// in its place: the answer and, for anything but keep or revert, why
// nothing is decided.
func decisionAnswer(raw json.RawMessage, err error) (answer, why string) {
	if err != nil {
		return answerNone, "the question got no answer (" + err.Error() + ")"
	}
	var res mcp.ElicitationResult
	if json.Unmarshal(raw, &res) != nil {
		return answerNone, "the client's answer was not an elicitation result"
	}
	switch res.Action {
	case mcp.ElicitationResponseActionDecline:
		return answerDecline, "the person declined to decide"
	case mcp.ElicitationResponseActionCancel:
		return answerCancel, "the person dismissed the question"
	case mcp.ElicitationResponseActionAccept:
	default:
		return answerNone, fmt.Sprintf("the client answered with the unknown action %q", text.ClipBytes(string(res.Action), 64))
	}
	content, _ := res.Content.(map[string]any)
	switch d, _ := content[decisionProperty].(string); d {
	case answerKeep, answerRevert:
		return d, ""
	case answerLater:
		return answerLater, "the person chose to decide later"
	default:
		return answerNone, fmt.Sprintf("the answer %q is not keep, revert or later", text.ClipBytes(d, 64))
	}
}

// applyDecision keeps or reverts every hunk of the run's change through
// the runtime's Review, the code flow_review calls, and adds the review's
// outcome to the run's report: the hunks' new states, the review record
// and the review report's sentence.
func (ss *session) applyDecision(run runWithHunks, answer string) runWithHunks {
	keep, revert := []string{"all"}, []string(nil)
	if answer == answerRevert {
		keep, revert = nil, []string{"all"}
	}
	rv, err := ss.srv.rt.Review(ss.base, run.RunID, keep, revert)
	if err != nil {
		run.Decision = &runDecision{Answer: answer, Status: report.StatusError, Message: fmt.Sprintf(
			"The person chose to %s the change, but the review could not be made: %s.", answer, strings.TrimSuffix(err.Error(), "."))}
		return run
	}
	run.Decision = &runDecision{Answer: answer, Status: rv.Status, Message: rv.Message}
	if len(rv.Hunks) > 0 {
		run.Hunks = rv.Hunks
		r := rv.Review
		run.Run.Review = &r
	}
	return run
}
