package agent

import (
	"context"
	"slices"
	"strings"

	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

// role runs one role invocation in a fresh conversation (SPEC §7, reference
// §6.3): the embedded system prompt, one user message holding the task and
// roleCtx, then model turns until the model answers without tool calls or a
// budget is exhausted. Its state is appended to the report.
func (r *run) role(ctx context.Context, name string, roleCtx any) report.Role {
	r.invoked++
	k := r.invoked
	r.setPhase(name)
	started := r.a.deps.Now()
	st := report.Role{Role: name, Model: r.cfg.ModelFor(name), Status: report.StatusUnverified}
	idx := len(r.rep.Roles)
	r.rep.Roles = append(r.rep.Roles, st)
	r.emit(Event{Kind: EventRoleStart, Role: name, Message: st.Model})

	final, _ := r.converse(ctx, name, k, roleCtx, &st)
	if st.Status == report.StatusOK && name == config.RoleReviewer {
		applyVerdict(&st, final)
	}
	r.rep.Roles[idx] = st
	r.emit(Event{
		Kind: EventRoleEnd, Role: name, Status: st.Status, Error: st.Error, Turn: st.Turns,
		DurationMS: r.a.deps.Now().Sub(started).Milliseconds(),
	})
	return st
}

// userMessage is the JSON shape of a role's single user message.
type userMessage struct {
	Task    string `json:"task"`
	Context any    `json:"context"`
}

// converse runs the turns of one role invocation, updating st, and returns
// the final answer's content (when the role finished ok) and the whole
// conversation.
func (r *run) converse(ctx context.Context, name string, k int, roleCtx any, st *report.Role) (string, []model.Message) {
	prompt, err := systemPrompt(name)
	if err != nil {
		st.Status, st.Error = report.StatusError, err.Error()
		return "", nil
	}
	user, err := report.Marshal(userMessage{Task: r.rep.Task, Context: roleCtx})
	if err != nil {
		st.Status, st.Error = report.StatusError, "encode role context: "+err.Error()
		return "", nil
	}
	offered := r.tools.Schemas(name)
	meter := newContextMeter(r.cfg.Agent.MaxContextChars, offered)
	msgs := make([]model.Message, 0, 8)
	push := func(m model.Message) {
		msgs = append(msgs, m)
		meter.add(m)
	}
	push(model.Message{Role: model.RoleSystem, Content: prompt})
	push(model.Message{Role: model.RoleUser, Content: string(user)})

	for turn := 1; turn <= r.cfg.Agent.MaxIterations; turn++ {
		if ctx.Err() != nil {
			st.Status, st.Error = report.StatusCancelled, MsgCancelled
			return "", msgs
		}
		if meter.exceeded() {
			st.Status, st.Error = report.StatusUnverified, MsgContextBudget
			return "", msgs
		}
		st.Turns++
		r.rep.ModelCalls++
		r.emit(Event{Kind: EventModelTurn, Role: name, Turn: turn})
		t0 := r.a.deps.Now()
		resp, err := r.a.deps.Backend.Chat(ctx, model.Request{
			Model:    st.Model,
			Messages: slices.Clone(msgs),
			Tools:    offered,
		})
		ms := r.a.deps.Now().Sub(t0).Milliseconds()
		r.rep.Usage.PromptTokens += resp.Usage.PromptTokens
		r.rep.Usage.CompletionTokens += resp.Usage.CompletionTokens
		if err != nil {
			if ctx.Err() != nil {
				st.Status, st.Error = report.StatusCancelled, MsgCancelled
			} else {
				st.Status, st.Error = report.StatusError, MsgBackendFailure+err.Error()
			}
			r.emit(Event{Kind: EventModelReply, Role: name, Turn: turn, Status: report.StatusError, Error: st.Error, DurationMS: ms})
			return "", msgs
		}
		content := resp.Message.Content
		calls := normaliseCalls(resp.Message.ToolCalls, name, k, turn)
		r.emit(Event{
			Kind: EventModelReply, Role: name, Turn: turn, Status: report.StatusOK, DurationMS: ms,
			Bytes: len(content), Message: replyPreview(content, len(calls.calls)),
		})
		if strings.TrimSpace(content) != "" {
			st.Summary = truncateChars(content, maxSummaryChars)
		}
		push(model.Message{Role: model.RoleAssistant, Content: content, ToolCalls: calls.calls})
		if len(calls.calls) == 0 {
			st.Status = report.StatusOK
			st.Summary = truncateChars(content, maxSummaryChars)
			return content, msgs
		}
		remaining := r.cfg.Agent.MaxToolCalls - r.rep.ToolCalls
		if len(calls.calls) > remaining {
			for _, c := range calls.calls {
				push(r.refuse(name, turn, st, c, MsgToolCallBudget, false))
			}
			st.Status, st.Error = report.StatusUnverified, MsgToolCallBudget
			return "", msgs
		}
		for i, c := range calls.calls {
			if msg, dup := calls.duplicate[i]; dup {
				r.rep.ToolCalls++ // answered, so it counts, but it is not executed
				push(r.refuse(name, turn, st, c, msg, true))
				continue
			}
			push(r.execute1(ctx, name, turn, st, c))
		}
	}
	st.Status, st.Error = report.StatusUnverified, MsgIterationBudget
	return "", msgs
}

// applyVerdict merges the reviewer's verdict into its finished state: a
// structured verdict sets approved, issues and summary; anything else makes
// the reviewer "unverified" (not a rejection).
func applyVerdict(st *report.Role, final string) {
	v, ok := parseVerdict(final)
	if !ok {
		st.Status = report.StatusUnverified
		st.Error = MsgReviewerVerdict
		st.Approved = nil
		return
	}
	approved := v.Approved
	st.Approved = &approved
	st.Issues = v.Issues
	if v.Summary != "" {
		st.Summary = v.Summary
	}
}

// replyPreview describes a model reply for progress events.
func replyPreview(content string, calls int) string {
	switch calls {
	case 0:
		return oneLine(content, 120)
	case 1:
		return "1 tool call"
	default:
		return itoa(calls) + " tool calls"
	}
}
