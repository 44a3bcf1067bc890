package agent

import (
	"context"
	"maps"
	"strings"

	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// role runs one role invocation in a fresh conversation (doc/design.md
// §6.6): the embedded system prompt, one user message holding the task and
// roleCtx, then model turns until a rule ends the role or
// agent.max_iterations is used up. It returns the role's outcome, which
// the run also keeps for its report.
func (r *run) role(ctx context.Context, name string, roleCtx map[string]any) outcome {
	r.invoked++
	r.setPhase(name)
	started := r.deps.Now()
	s := newSession(r.env, r.policyFor(name), r.invoked)
	r.emit(progress.Event{Kind: progress.RoleStart, Role: name, Message: s.model})
	r.current = s
	e := r.open(ctx, s, roleCtx)
	if e == nil {
		ended := s.converse(ctx)
		e = &ended
	}
	o := s.outcome(*e)
	r.current = nil
	r.roles = append(r.roles, o.Role)
	r.emit(progress.Event{
		Kind: progress.RoleEnd, Role: name, Status: o.Status, Error: o.Error, Turn: o.Turns,
		DurationMS: r.deps.Now().Sub(started).Milliseconds(),
	})
	return o
}

// skipRole records role name as skipped for the reason why, with a role
// end event that says so.
func (r *run) skipRole(name, why string) outcome {
	server, _, _ := r.cfg.ServerFor(name)
	o := outcome{Role: report.Role{Role: name, Model: r.cfg.ModelFor(name), Server: server, Status: report.StatusSkipped, Summary: why}, end: end{cause: causeSkipped}}
	r.roles = append(r.roles, o.Role)
	r.emit(progress.Event{Kind: progress.RoleEnd, Role: name, Status: o.Status, Message: why})
	return o
}

// open starts a role's conversation: the shared system prompt and one
// user message — the run's shared part (the task, the brief), then the
// role's context and its instructions (doc/design.md §6.5). A whole-file
// coder's instructions follow the shared prompt in the system message, and
// its conversation opens with a worked example and the files in turns of
// their own before that message, which then holds the task without the
// brief and ends with the format (§6.7).
func (r *run) open(ctx context.Context, s *session, roleCtx map[string]any) *end {
	instructions, err := s.p.instructions()
	if err != nil {
		return &end{cause: causeSetup, detail: err.Error()}
	}
	if s.p.showChanged {
		if cur := r.currentFiles(ctx); cur != "" {
			roleCtx = maps.Clone(roleCtx)
			if roleCtx == nil {
				roleCtx = map[string]any{}
			}
			roleCtx["current_files"] = cur
		}
	}
	if now, _ := roleCtx[nowKey].(string); s.p.whole && strings.TrimSpace(now) != "" {
		roleCtx = maps.Clone(roleCtx)
		roleCtx[nowKey] = strings.TrimSpace(now) + "\n\n" + wholeReminder
	}
	s.now, _ = roleCtx[nowKey].(string)
	shared := r.sharedMessage(ctx).text
	var opening []model.Message
	if s.p.whole {
		listing := r.fileListing(ctx)
		opening = wholeOpening(listing)
		if listing != "" {
			shared = r.sharedMessage(ctx).task
		}
	}
	inMessage := instructions
	if s.p.whole {
		inMessage = "" // in the system message, after the shared prompt
	}
	user, err := renderUserMessage(shared, roleCtx, inMessage)
	if err != nil {
		return &end{cause: causeSetup, detail: "encode role context: " + err.Error()}
	}
	system := systemPrompt()
	if s.p.whole {
		system += "\n" + strings.TrimSpace(instructions) + "\n"
	}
	s.conv.push(model.Message{Role: model.RoleSystem, Content: system})
	for _, m := range opening {
		s.conv.push(m)
	}
	s.conv.push(model.Message{Role: model.RoleUser, Content: user})
	return nil
}
