package agent

import (
	"encoding/json"
	"strings"

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
	// sent are the prompts of the run's calls so far, as prefixText renders
	// them, for the new part of the next one.
	sent []string
}

// prompt records the prompt of a call about to be made and returns its
// size and how much of it does not continue a prefix an earlier call sent
// (doc/design.md §6.5): the longest common prefix with any earlier prompt
// is what a server's prompt cache could reuse at best.
func (rc *recorder) prompt(req model.Request) (size, novel int) {
	p := prefixText(req)
	best := 0
	for _, q := range rc.sent {
		best = max(best, commonPrefix(p, q))
	}
	rc.sent = append(rc.sent, p)
	return len(p), len(p) - best
}

// prefixText renders a request in the order a chat template lays it out
// for the prompt cache: the system message, the tool declarations, then
// the other messages with their calls.
func prefixText(req model.Request) string {
	var b strings.Builder
	rest := req.Messages
	if len(rest) > 0 && rest[0].Role == model.RoleSystem {
		b.WriteString(rest[0].Content)
		rest = rest[1:]
	}
	for _, t := range req.Tools {
		if raw, err := json.Marshal(t); err == nil {
			b.Write(raw)
		}
	}
	for _, m := range rest {
		b.WriteString("\x00" + m.Role + "\x00" + m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("\x00" + c.Name + "\x00" + c.Arguments)
		}
	}
	return b.String()
}

// commonPrefix is the length in bytes of a's and b's common prefix.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
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
