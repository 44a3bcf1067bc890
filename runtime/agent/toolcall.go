package agent

import (
	"context"
	"unicode/utf8"

	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// admit answers the calls of turn t: a batch larger than what is left of
// agent.max_tool_calls is refused whole and ends the role; otherwise each
// call is refused (a duplicate id), answered from the previous turn (an
// identical call, see repeats) or executed, and counts as a tool call.
// The caller ends the turn for repeats (seen.nextTurn) once every batch of
// the turn is answered. fromText marks the calls' events as found in the
// reply's text or code.
func (s *session) admit(ctx context.Context, t *turn, fromText bool) *end {
	rec := s.r.rec
	if len(t.calls.calls) > s.r.cfg.Agent.MaxToolCalls-rec.toolCalls {
		for _, c := range t.calls.calls {
			s.answer(t, c, s.refusal(c, MsgToolCallBudget, fromText), nil)
		}
		return &end{cause: causeToolCallBudget}
	}
	for i, c := range t.calls.calls {
		rec.toolCalls++
		msg, dup := t.calls.duplicate[i]
		if refusal, ok := t.calls.refused[i]; ok && !dup {
			msg, dup = refusal, true
		}
		if dup {
			s.toolErrors++
			s.answer(t, c, s.refusal(c, msg, fromText), nil)
			t.results = append(t.results, callResult{key: callKey(c), status: report.StatusError, refused: true})
			continue
		}
		if a, ok := s.seen.previous(c); ok {
			s.answer(t, c, s.repeated(c, a, fromText), nil)
			s.seen.keep(c, a)
			t.results = append(t.results, callResult{key: callKey(c), status: a.status, repeated: true})
			continue
		}
		status := s.execute(ctx, t, c, fromText)
		t.results = append(t.results, callResult{key: callKey(c), status: status, ran: true})
	}
	return nil
}

// answered is a call's tool message and its report event.
type answered struct {
	msg model.Message
	ev  report.Event
}

// answer adds a call's tool message to the conversation and records its
// event; diff is an edit's diff.
func (s *session) answer(t *turn, c model.ToolCall, a answered, diff *report.FileDiff) {
	s.conv.push(a.msg)
	s.r.rec.tool(a.ev, t.n, c, diff)
}

// execute runs one tool call, answers it and returns its status.
func (s *session) execute(ctx context.Context, t *turn, c model.ToolCall, fromText bool) string {
	r := s.r
	r.emit(progress.Event{Kind: progress.ToolStart, Role: s.p.role, Turn: t.n, Tool: c.Name, ToolCallID: c.ID, Message: callDetail(c)})
	t0 := r.deps.Now()
	r.edit.reset()
	res := r.tools.Call(ctx, s.p.role, c)
	ms := r.deps.Now().Sub(t0).Milliseconds()

	content, status, errMsg := res.Content, res.Status, res.Error
	if status == "" {
		status = report.StatusUnverified
	}
	switch {
	case content == "":
		content = resultJSON(status, errMsg)
	case utf8.RuneCountInString(content) > maxToolResultChars:
		// The registry bounds its results; this guards the bound anyway.
		status = report.StatusError
		errMsg = "The tool result exceeded the 40000-character limit; ask for less (a line range or a narrower search)."
		content = resultJSON(status, errMsg)
	}
	if status != report.StatusOK {
		s.toolErrors++
	}
	var edit *report.FileDiff
	if res.Changed != "" {
		r.changed[res.Changed] = true
		r.writes++
		s.seen.forget() // earlier results may be stale now
		if status == report.StatusOK {
			edit = r.edit.diffOf(res.Changed)
		}
	}
	s.seen.keep(c, answer{id: c.ID, status: status, content: content})
	s.answer(t, c, answered{
		msg: toolMessage(c, content),
		ev: report.Event{
			Role: s.p.role, Tool: c.Name, ToolCallID: c.ID, Status: status, Error: errMsg,
			DurationMS: ms, Bytes: len(content), Truncated: res.Truncated, FromText: fromText,
		},
	}, edit)
	return status
}

// refusal is the answer to a call that is not executed: an error result
// saying why.
func (s *session) refusal(c model.ToolCall, msg string, fromText bool) answered {
	content := resultJSON(report.StatusError, msg)
	return answered{
		msg: toolMessage(c, content),
		ev:  report.Event{Role: s.p.role, Tool: c.Name, ToolCallID: c.ID, Status: report.StatusError, Error: msg, Bytes: len(content), FromText: fromText},
	}
}

// repeated answers a call identical to one of the previous turn's with
// that call's result and a note; it counts as a tool error when that
// result was one.
func (s *session) repeated(c model.ToolCall, prev answer, fromText bool) answered {
	content := repeatedJSON(prev)
	if prev.status != report.StatusOK {
		s.toolErrors++
	}
	return answered{
		msg: toolMessage(c, content),
		ev:  report.Event{Role: s.p.role, Tool: c.Name, ToolCallID: c.ID, Status: prev.status, Bytes: len(content), Repeated: true, FromText: fromText},
	}
}
