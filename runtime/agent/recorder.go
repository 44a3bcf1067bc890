package agent

import (
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// recorder keeps what a run's report counts while the run goes on: the
// report's events with the live event each one is shown as, the model and
// tool calls, and the token usage. The report is assembled from it once,
// when the run ends (run.report).
type recorder struct {
	emit       func(progress.Event)
	events     []report.Event
	modelCalls int
	toolCalls  int
	usage      report.Usage
}

// modelCall records a model call that ended (ok or not) and emits its
// model_reply event; preview is the reply's one-line description.
func (rc *recorder) modelCall(ev report.Event, preview string) {
	rc.events = append(rc.events, ev)
	cp := ev
	rc.emit(progress.Event{
		Kind: progress.ModelReply, Role: ev.Role, Turn: ev.Turn, Status: ev.Status, Error: ev.Error,
		DurationMS: ev.DurationMS, Bytes: ev.Bytes, Message: preview, ModelCall: &cp,
	})
}

// tool records an answered tool call (run, refused or answered from the
// previous turn) and emits its tool_end event, which adds the turn, the
// call's main argument and, for an edit, its diff.
func (rc *recorder) tool(ev report.Event, turn int, c model.ToolCall, diff *report.FileDiff) {
	rc.events = append(rc.events, ev)
	rc.emit(progress.Event{
		Kind: progress.ToolEnd, Role: ev.Role, Turn: turn, Tool: ev.Tool, ToolCallID: ev.ToolCallID,
		Status: ev.Status, Error: ev.Error, DurationMS: ev.DurationMS, Bytes: ev.Bytes,
		Truncated: ev.Truncated, Repeated: ev.Repeated, Message: callDetail(c), Diff: diff,
	})
}

// usageOf adds a call's token counts to the run's.
func (rc *recorder) usageOf(u model.Usage) {
	rc.usage.PromptTokens += u.PromptTokens
	rc.usage.CompletionTokens += u.CompletionTokens
}
