package agent

import (
	"context"
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/model"
)

// newSession starts invocation k of the role of policy p in the run e.
func newSession(r *env, p policy, k int) *session {
	s := &session{r: r, p: p, k: k, model: r.cfg.ModelFor(p.role), writes: r.writes,
		conv: newConversation(r.cfg.Agent.MaxContextChars, p.offered, r.nativeTools)}
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
		if e := s.admit(ctx, t, ex.source != fromNative); e != nil {
			return nil, e
		}
		s.seen.nextTurn()
	}
	t.wrote = s.r.writes != s.writes
	if s.p.retry > 0 {
		s.r.idle = len(t.calls.calls) == 0 && !t.wrote
	}
	return t, nil
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
