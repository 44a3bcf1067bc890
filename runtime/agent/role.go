package agent

import (
	"context"
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/model"
	"flow/runtime/tools"
)

// newSession starts invocation k of the role of policy p in the run e.
func newSession(r *env, p policy, k int) *session {
	s := &session{r: r, p: p, k: k, model: r.cfg.ModelFor(p.role), writes: r.writes,
		conv: newConversation(r.cfg.Agent.MaxContextChars, p.offered)}
	s.rules = s.newRules()
	return s
}

// converse runs the turns of the invocation, whose conversation has been
// opened (its system prompt and user message), and returns how it ended.
func (s *session) converse(ctx context.Context) end {
	max := s.r.cfg.Agent.MaxIterations
	for n := 1; n <= max; n++ {
		if e := s.ready(ctx); e != nil {
			return *e
		}
		t, e := s.turn(ctx, n, n == max)
		if e != nil {
			return *e
		}
		if e := s.judge(ctx, t); e != nil {
			return *e
		}
	}
	return end{cause: causeIterationBudget}
}

// ready is the check before each turn: the run is not cancelled and the
// conversation is within agent.max_context_chars.
func (s *session) ready(ctx context.Context) *end {
	switch {
	case ctx.Err() != nil:
		return &end{cause: causeCancelled}
	case s.conv.exceeded():
		return &end{cause: causeContextBudget}
	}
	return nil
}

// turn makes one model turn: the call, the extraction of its tool calls,
// the reply's record, and the admission and execution of the calls
// (doc/design.md §6.6).
func (s *session) turn(ctx context.Context, n int, last bool) (*turn, *end) {
	req, note := s.p.request(s.model, s.conv), ""
	if s.p.retry > 0 && s.r.idle && s.r.unfinished() {
		req.Temperature = &s.p.retry
		note = fmt.Sprintf("temperature %g: the last reply changed nothing", s.p.retry)
	}
	c, e := s.ask(ctx, n, req, note)
	if e != nil {
		return nil, e
	}
	ex := s.extract(ctx, c.resp)
	if e := s.settle(c, ex); e != nil {
		return nil, e
	}
	t := &turn{n: n, last: last, content: c.resp.Message.Content}
	t.calls = normaliseCalls(ex.calls, s.p.role, s.k, n)
	t.calls.refused = ex.refused
	t.empty = len(t.calls.calls) == 0 && strings.TrimSpace(t.content) == ""
	if ex.source == fromCode {
		t.code = ex.paths
	}
	if strings.TrimSpace(t.content) != "" {
		s.summary = text.Truncate(t.content, maxSummaryChars)
	}
	s.conv.push(model.Message{Role: model.RoleAssistant, Content: t.content, ToolCalls: t.calls.calls})
	if len(t.calls.calls) > 0 {
		writes := s.r.writes
		if e := s.admit(ctx, t, ex.source != fromNative); e != nil {
			return nil, e
		}
		if ex.source == fromText && s.r.writes == writes && triedEdit(t.calls.calls) {
			if e := s.fallBack(ctx, t, c.resp); e != nil {
				return nil, e
			}
		}
		s.seen.nextTurn()
	}
	t.wrote = s.r.writes != s.writes
	if s.p.retry > 0 {
		s.r.idle = len(t.calls.calls) == 0 && !t.wrote
	}
	return t, nil
}

// fallBack: the tool calls that a reply wrote as text tried to change a
// file and changed none (a file_edit whose old_string matched no place, or
// two), so the code the same reply gives is applied instead, as if it had
// written no call: the files of the whole-file format, then the answer's
// code (doc/design.md §6.6). The calls made from the code are a second
// batch of the turn, in an assistant message of their own, and the turn's
// rules judge them: all succeeding, the coder is done (code applied). In a
// real run the 1.5B coder wrote a correct Remove in a code block and, after
// it, a file_edit call whose old_string matched two places; the call ran
// first, failed three times, and the correct code was never applied.
func (s *session) fallBack(ctx context.Context, t *turn, resp model.Response) *end {
	for _, x := range s.p.codeExtractors() {
		ex, ok := x(ctx, s, resp)
		if !ok {
			continue
		}
		calls := make([]model.ToolCall, len(ex.calls))
		for i, c := range ex.calls {
			// Numbered on from the text calls', so that every id in the
			// conversation stays unique.
			c.ID = fmt.Sprintf("%s-%d-%d-%d", s.p.role, s.k, t.n, len(t.calls.calls)+i)
			calls[i] = c
		}
		code := &turn{n: t.n, last: t.last, content: t.content, code: ex.paths}
		code.calls = normaliseCalls(calls, s.p.role, s.k, t.n)
		code.calls.refused = ex.refused
		s.conv.push(model.Message{Role: model.RoleAssistant, ToolCalls: code.calls.calls})
		if e := s.admit(ctx, code, true); e != nil {
			return e
		}
		t.calls, t.results, t.code = code.calls, code.results, code.code
		return nil
	}
	return nil
}

// triedEdit says whether calls include one that changes a file.
func triedEdit(calls []model.ToolCall) bool {
	for _, c := range calls {
		if c.Name == tools.FileEdit || c.Name == tools.FileWrite {
			return true
		}
	}
	return false
}

// judge runs the after-turn rules on t: the first that decides ends the
// role or adds its message.
func (s *session) judge(ctx context.Context, t *turn) *end {
	for _, rl := range s.rules {
		st := rl.apply(ctx, t)
		if !st.decided() {
			continue
		}
		if st.blank {
			s.conv.replaceLast(model.Message{Role: model.RoleAssistant})
		}
		if st.end != nil {
			return st.end
		}
		s.conv.push(model.Message{Role: model.RoleUser, Content: st.say})
		return nil
	}
	return nil
}
