package agent

import (
	"context"
	"strings"

	"flow/internal/text"
	"flow/runtime/model"
)

// newSession starts invocation k of the role of policy p in the run e.
func newSession(r *env, p policy, k int) *session {
	server, _, _ := r.cfg.ServerFor(p.role)
	s := &session{r: r, p: p, k: k, model: r.cfg.ModelFor(p.role), server: server, writes: r.writes,
		conv: newConversation(r.cfg.Agent.MaxContextChars, p.offered, r.format.nativeTools)}
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
	req := s.p.request(s.model, s.conv)
	note := s.prepare(&req)
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
	s.learn(t)
	return t, nil
}

// prepare runs the run's before-turn rules (beforeturn.go) on req and
// joins their notes.
func (s *session) prepare(req *model.Request) string {
	var notes []string
	for _, rl := range s.r.beforeTurn {
		if n := rl.prepare(s.view(), req); n != "" {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

// learn hands the turn that just ended to the before-turn rules.
func (s *session) learn(t *turn) {
	for _, rl := range s.r.beforeTurn {
		rl.learn(s.view(), len(t.calls.calls), t.wrote)
	}
}

// view is the invocation as the before-turn rules see it.
func (s *session) view() turnView {
	return turnView{retry: s.p.retry, unfinished: s.r.unfinished()}
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
