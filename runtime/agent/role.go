package agent

import (
	"context"
	"encoding/json"
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
func (r *run) role(ctx context.Context, name string, roleCtx map[string]any) report.Role {
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

// skipRole records role name as skipped for the reason why, with a role
// end event that says so.
func (r *run) skipRole(name, why string) report.Role {
	st := report.Role{Role: name, Model: r.cfg.ModelFor(name), Status: report.StatusSkipped, Summary: why}
	r.rep.Roles = append(r.rep.Roles, st)
	r.emit(Event{Kind: EventRoleEnd, Role: name, Status: st.Status, Message: why})
	return st
}

// conversation is one role invocation's message list with its two size
// accounts: the context meter (max_context_chars) and the prompt size the
// context window check uses.
type conversation struct {
	msgs    []model.Message
	meter   *contextMeter
	offered []model.Tool
}

func (c *conversation) push(m model.Message) {
	c.msgs = append(c.msgs, m)
	c.meter.add(m)
}

// chars is the prompt size of the next call, with tools when offered.
func (c *conversation) chars(withTools bool) int {
	if withTools {
		return promptChars(c.msgs, c.offered)
	}
	return promptChars(c.msgs, nil)
}

// converse runs the turns of one role invocation, updating st, and returns
// the final answer's content (when the role finished ok) and the whole
// conversation.
//
// An empty reply (no text, no tool call: what a server hands on when the
// model's tool call did not parse) is not an answer: it gets one corrective
// user message naming the role's tools, and a second empty reply in a row
// ends the role with [MsgEmptyReply]. A call identical to one of the
// previous turn's is answered from that turn (see repeats). The reviewer's
// final answer, when it holds no parsable verdict, is followed by one
// verdict request with structured output (see [VerdictSchema]). A coder
// that answers while no file changed in this invocation is told once that
// nothing was applied (msgNoChange), and a turn whose calls have each
// failed twice before ends the role with [MsgStuck]. A turn that only
// repeats the previous turn's calls gets one message saying that the next
// such turn ends the role (msgRepeatTurn); the next one does: a coder that
// changed files finishes ok (its checks and the reviewer judge the change),
// any other role ends with [MsgRepeating].
func (r *run) converse(ctx context.Context, name string, k int, roleCtx map[string]any, st *report.Role) (string, []model.Message) {
	prompt, err := rolePrompt(name, r.cfg.Agent.AnswerCode && r.cfg.Trusted)
	if err != nil {
		st.Status, st.Error = report.StatusError, err.Error()
		return "", nil
	}
	user, err := renderUserMessage(r.rep.Task, roleCtx, r.roleBrief(ctx, name, roleCtx))
	if err != nil {
		st.Status, st.Error = report.StatusError, "encode role context: "+err.Error()
		return "", nil
	}
	offered := r.tools.Schemas(name)
	conv := &conversation{
		msgs:    make([]model.Message, 0, 8),
		meter:   newContextMeter(r.cfg.Agent.MaxContextChars, offered),
		offered: offered,
	}
	conv.push(model.Message{Role: model.RoleSystem, Content: prompt})
	conv.push(model.Message{Role: model.RoleUser, Content: string(user)})

	var (
		prev       promptSize         // the previous call's size, for the window check
		wasEmpty   bool               // the last reply was empty and was told so
		nudged     bool               // the coder was told once that nothing changed
		repeating  bool               // the last turn only repeated calls and was told so
		failures   = map[string]int{} // failing results per call (callKey)
		changedAt  = r.writes         // the run's writes before this invocation
		seen       repeats
		maxTurns   = r.cfg.Agent.MaxIterations
		isReviewer = name == config.RoleReviewer
	)
	for turn := 1; turn <= maxTurns; turn++ {
		if ctx.Err() != nil {
			st.Status, st.Error = report.StatusCancelled, MsgCancelled
			return "", conv.msgs
		}
		if conv.meter.exceeded() {
			st.Status, st.Error = report.StatusUnverified, MsgContextBudget
			return "", conv.msgs
		}
		resp, ok := r.call(ctx, name, turn, st, conv, &prev)
		if !ok {
			return "", conv.msgs
		}
		content := resp.Message.Content
		calls := normaliseCalls(resp.calls, name, k, turn)
		empty := len(calls.calls) == 0 && strings.TrimSpace(content) == ""

		if empty && !wasEmpty && turn < maxTurns {
			// One corrective retry. The reviewer gets it too; after a
			// second empty reply it still gets the verdict request.
			wasEmpty = true
			conv.push(model.Message{Role: model.RoleAssistant})
			conv.push(model.Message{Role: model.RoleUser, Content: emptyReplyMessage(offered)})
			continue
		}
		if empty && !isReviewer {
			how := "it was told once and replied empty again"
			if !wasEmpty {
				how = "no turn was left to ask again (max_iterations)"
			}
			st.Status, st.Error = report.StatusError, MsgEmptyReply+": "+how+"; "+emptyReplyAdvice
			return "", conv.msgs
		}
		wasEmpty = false
		if strings.TrimSpace(content) != "" {
			st.Summary = truncateChars(content, maxSummaryChars)
		}
		var codePaths []string // the files the answer's code blocks change
		if len(calls.calls) == 0 && name == config.RoleCoder && r.cfg.Trusted && r.writes == changedAt {
			// A small model often answers with the changed code instead
			// of an edit: apply it as the edits it stands for.
			var code []model.ToolCall
			if code, codePaths = r.codeCalls(ctx, content); len(code) > 0 {
				calls = normaliseCalls(code, name, k, turn)
			}
		}
		conv.push(model.Message{Role: model.RoleAssistant, Content: content, ToolCalls: calls.calls})
		if len(calls.calls) == 0 {
			if isReviewer {
				return r.finishReview(ctx, turn, st, conv, &prev, content, empty), conv.msgs
			}
			if name == config.RoleCoder && r.cfg.Trusted && !nudged && r.writes == changedAt && turn < maxTurns {
				// A small model often answers with the code, or with a
				// claim that it changed a file, instead of changing it:
				// tell it once.
				nudged = true
				conv.push(model.Message{Role: model.RoleUser, Content: noChangeMessage(r.cfg.Agent.AnswerCode)})
				continue
			}
			st.Status = report.StatusOK
			st.Summary = truncateChars(content, maxSummaryChars)
			return content, conv.msgs
		}
		first := len(r.rep.Events) // the batch's events start here
		remaining := r.cfg.Agent.MaxToolCalls - r.rep.ToolCalls
		if len(calls.calls) > remaining {
			for _, c := range calls.calls {
				conv.push(r.refuse(name, turn, st, c, MsgToolCallBudget, false))
			}
			r.markFromText(first, resp.fromText)
			st.Status, st.Error = report.StatusUnverified, MsgToolCallBudget
			return "", conv.msgs
		}
		stuck := true       // every call of this turn failed, each at least twice before
		onlyRepeats := true // no call of this turn was run
		allOK := true       // every call of this turn succeeded
		fail := func(c model.ToolCall, status string) {
			if status != report.StatusOK {
				allOK = false
			}
			if status != report.StatusError {
				stuck = false
				return
			}
			k := callKey(c)
			if failures[k] < 2 {
				stuck = false
			}
			failures[k]++
		}
		for i, c := range calls.calls {
			if msg, dup := calls.duplicate[i]; dup {
				r.rep.ToolCalls++ // answered, so it counts, but it is not executed
				conv.push(r.refuse(name, turn, st, c, msg, true))
				continue
			}
			if a, ok := seen.previous(c); ok {
				conv.push(r.repeated(name, turn, st, c, a))
				seen.keep(c, a)
				fail(c, a.status)
				continue
			}
			onlyRepeats = false
			msg, status, changed := r.execute1(ctx, name, turn, st, c)
			if changed {
				seen.forget() // earlier results may be stale now
			}
			seen.keep(c, answer{id: c.ID, status: status, content: msg.Content})
			fail(c, status)
			conv.push(msg)
		}
		r.markFromText(first, resp.fromText || len(codePaths) > 0)
		seen.nextTurn()
		if len(codePaths) > 0 && allOK {
			// The answer's code is applied: the coder is done, and its
			// checks and the reviewer judge the change.
			st.Status = report.StatusOK
			st.Summary = truncateChars(msgCodeApplied(codePaths)+" "+content, maxSummaryChars)
			return st.Summary, conv.msgs
		}
		if stuck {
			// A third failure of the same calls: the next turns would
			// only repeat them again.
			st.Status, st.Error = report.StatusUnverified, MsgStuck
			return "", conv.msgs
		}
		if !onlyRepeats {
			repeating = false
			continue
		}
		if !repeating {
			// Told once; on its last turn the role ends on its budget.
			if turn < maxTurns {
				repeating = true
				conv.push(model.Message{Role: model.RoleUser, Content: msgRepeatTurn(name)})
			}
			continue
		}
		// In the evaluation's real-model runs, a role that had made a turn
		// of repeats never made a new call afterwards.
		if name == config.RoleCoder && r.writes > changedAt {
			st.Status = report.StatusOK
			if strings.TrimSpace(content) == "" {
				st.Summary = msgRepeatDone
			}
			return st.Summary, conv.msgs
		}
		st.Status, st.Error = report.StatusUnverified, MsgRepeating
		return "", conv.msgs
	}
	st.Status, st.Error = report.StatusUnverified, MsgIterationBudget
	return "", conv.msgs
}

// msgCodeApplied opens the summary of a coder whose answer's code the host
// applied to paths.
func msgCodeApplied(paths []string) string {
	return "(The host applied the code of this answer to " + strings.Join(paths, ", ") + " with file_edit.)"
}

// msgRepeatTurn tells a role that its turn only repeated its previous
// calls, and what to do instead.
func msgRepeatTurn(role string) string {
	next := "If your change is made, answer with a short summary of it and no tool call; otherwise make a different call."
	switch role {
	case config.RolePlanner:
		next = "Answer now with your plan, without a tool call."
	case config.RoleReviewer:
		next = "Answer now with your verdict, without a tool call."
	}
	return "You repeated your previous calls; they were not run again and their results are above. " +
		"Repeating them once more ends your turn. " + next
}

// msgPlannerSkipped is the skipped planner's summary: why it did not run.
const msgPlannerSkipped = "the coder is handed the text of every source file, so there is nothing for a planner to find (agent.planner = \"auto\"; set it to \"always\" to plan anyway)"

// msgRepeatDone is the summary of a coder that changed files and then only
// repeated its calls, when its last reply had no text.
const msgRepeatDone = "(the coder repeated its last calls after changing files; its change is judged as it stands)"

// emptyReplyAdvice ends the error of a role whose model replied empty.
const emptyReplyAdvice = "use a model whose tool calls this server parses (check `flow doctor`), or a lower temperature"

// msgNoChange is the one reminder a coder gets when it answers (with code
// it could not be applied, or saying what it changed) but has changed no
// file; msgNoChangeCode is the reminder with agent.answer_code on.
const (
	msgNoChange     = "Your answer changed no file: only file_edit and file_write change files. Make the change now with a file_edit call (or file_write for a new or wholly rewritten file). If the task really needs no further change, answer again without code and say why."
	msgNoChangeCode = "Your answer changed no file. Make the change now: call file_edit, or answer with each whole changed function (or the whole file) in a fenced code block, which the host applies. If the task really needs no further change, answer again without code and say why."
)

func noChangeMessage(answerCode bool) string {
	if answerCode {
		return msgNoChangeCode
	}
	return msgNoChange
}

// emptyReplyMessage is the corrective user message after an empty reply.
func emptyReplyMessage(offered []model.Tool) string {
	names := make([]string, len(offered))
	for i, t := range offered {
		names[i] = t.Name
	}
	tools := "none"
	if len(names) > 0 {
		tools = strings.Join(names, ", ")
	}
	return "Your last reply was empty: it had no text, or its tool call could not be parsed. " +
		"The tools you can call are: " + tools + ". Call one of them with a JSON object of arguments, or answer in plain text."
}

// reply is a model answer with the tool calls to execute: the native ones,
// or those found in its text.
type reply struct {
	model.Response
	calls    []model.ToolCall
	fromText bool // calls came from textToolCalls
}

// call makes one model call of a role invocation, offering the role's
// tools; see callFormat.
func (r *run) call(ctx context.Context, name string, turn int, st *report.Role, conv *conversation, prev *promptSize) (reply, bool) {
	return r.callFormat(ctx, name, turn, st, conv, true, nil, prev, "")
}

// maxFormatTokens bounds the reply to a request for structured output. A
// model whose sampling the server constrains to the schema, but which does
// not want to write it, can otherwise go on (whitespace, an endless string)
// until the window is full or the timeout ends the role; a verdict needs
// far less.
const maxFormatTokens = 1024

// maxReadOnlyReplyTokens bounds each reply of the planner and the
// reviewer, who write a plan, a verdict or a tool call, never a file: a
// small model caught in a loop otherwise writes until the call times out
// (seen with a 1.5B planner). The coder keeps the client's bound, since
// its file_write calls carry whole files.
const maxReadOnlyReplyTokens = 2048

// callFormat makes one model call: it counts the turn, emits the progress
// events, records the model-call event, and checks the prompt against the
// context window before and after (prev is the role's previous call, and
// is updated). withTools offers the role's tools; format asks for
// structured output; note goes into the event. On failure it sets st and
// returns false.
func (r *run) callFormat(ctx context.Context, name string, turn int, st *report.Role, conv *conversation, withTools bool, format json.RawMessage, prev *promptSize, note string) (reply, bool) {
	chars := conv.chars(withTools)
	if msg := r.contextWindow().before(chars); msg != "" {
		st.Status, st.Error = report.StatusError, msg
		return reply{}, false
	}
	req := model.Request{Model: st.Model, Messages: slices.Clone(conv.msgs), Format: format}
	switch {
	case format != nil:
		req.MaxTokens = maxFormatTokens
	case name != config.RoleCoder:
		req.MaxTokens = maxReadOnlyReplyTokens
	}
	if withTools {
		req.Tools = conv.offered
	}
	if r.events != nil {
		req.OnDelta = func(text string) {
			r.emit(Event{Kind: EventModelDelta, Role: name, Turn: turn, Message: text})
		}
	}
	st.Turns++
	r.rep.ModelCalls++
	r.emit(Event{Kind: EventModelTurn, Role: name, Turn: turn})
	t0 := r.a.deps.Now()
	stopBeat := r.heartbeat(name, turn)
	resp, err := r.a.deps.Backend.Chat(ctx, req)
	stopBeat()
	ms := r.a.deps.Now().Sub(t0).Milliseconds()
	r.rep.Usage.PromptTokens += resp.Usage.PromptTokens
	r.rep.Usage.CompletionTokens += resp.Usage.CompletionTokens
	ev := report.Event{
		Kind: report.EventModelCall, Role: name, Cycle: r.rep.Cycles, Turn: turn, Status: report.StatusOK,
		DurationMS: ms, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		DoneReason: resp.DoneReason, Note: note, PromptEvalMS: resp.PromptEval.Milliseconds(),
	}
	if err != nil {
		if ctx.Err() != nil {
			st.Status, st.Error = report.StatusCancelled, MsgCancelled
		} else {
			st.Status, st.Error = report.StatusError, MsgBackendFailure+err.Error()
		}
		ev.Status, ev.Error = report.StatusError, st.Error
		r.recordModelCall(ev, "")
		return reply{}, false
	}
	out := reply{Response: resp, calls: resp.Message.ToolCalls}
	ev.NativeToolCalls = len(out.calls)
	if withTools && len(out.calls) == 0 {
		out.calls = textToolCalls(resp.Message.Content, conv.offered)
		ev.TextToolCalls = len(out.calls)
		out.fromText = len(out.calls) > 0
	}
	if !withTools {
		out.calls = nil // no tools were offered; a call is not an answer
	}
	ev.Bytes = len(resp.Message.Content)
	if len(out.calls) == 0 && strings.TrimSpace(resp.Message.Content) == "" && ev.Note == "" {
		ev.Note = "empty reply"
	}
	preview := replyPreview(resp.Message.Content, len(out.calls))
	if msg := r.contextWindow().after(chars, resp.Usage.PromptTokens, *prev); msg != "" {
		st.Status, st.Error = report.StatusError, msg
		ev.Status, ev.Error = report.StatusError, msg
		r.recordModelCall(ev, preview)
		return reply{}, false
	}
	if resp.Usage.PromptTokens > 0 {
		*prev = promptSize{chars: chars, tokens: resp.Usage.PromptTokens}
	}
	r.recordModelCall(ev, preview)
	return out, true
}

// recordModelCall appends a model call's event to the report and emits its
// model_reply progress event.
func (r *run) recordModelCall(ev report.Event, preview string) {
	r.rep.Events = append(r.rep.Events, ev)
	cp := ev
	r.emit(Event{
		Kind: EventModelReply, Role: ev.Role, Turn: ev.Turn, Status: ev.Status, Error: ev.Error,
		DurationMS: ev.DurationMS, Bytes: ev.Bytes, Message: preview, ModelCall: &cp,
	})
}

// markFromText marks the tool events from index first on as calls that
// came from the reply's text, when fromText.
func (r *run) markFromText(first int, fromText bool) {
	if !fromText {
		return
	}
	for i := first; i < len(r.rep.Events); i++ {
		r.rep.Events[i].FromText = true
	}
}

// textToolCalls is where tool calls written as text become tool calls: a
// reply without native tool calls is passed here with the tools offered to
// the role, and the calls returned are executed exactly as native ones
// (same ids, validation and budgets) and counted as text_tool_calls in the
// model-call event. The calls come without ids; the role loop gives them
// its synthesised ones, as it does for native calls that lack one.
func textToolCalls(content string, offered []model.Tool) []model.ToolCall {
	names := make([]string, len(offered))
	for i, t := range offered {
		names[i] = t.Name
	}
	return model.TextToolCalls(content, names)
}

// finishReview ends a reviewer whose answer had no tool calls and returns
// the text its verdict is taken from. An answer without a parsable verdict
// is followed by the verdict request (one call without tools, with the
// verdict's JSON Schema as the structured-output format), when a turn is
// left; its answer is used if it parses, else the first answer stays, for
// the usual parsing (bare, fenced, last object). An empty answer with no
// parsable verdict after it makes the reviewer unverified, naming the
// empty reply.
func (r *run) finishReview(ctx context.Context, turn int, st *report.Role, conv *conversation, prev *promptSize, content string, empty bool) string {
	st.Status = report.StatusOK
	st.Summary = truncateChars(content, maxSummaryChars)
	if _, ok := parseVerdict(content); ok {
		return content
	}
	var answer string
	asked := turn < r.cfg.Agent.MaxIterations && ctx.Err() == nil
	if asked {
		conv.push(model.Message{Role: model.RoleUser, Content: verdictRequest})
		asked = !conv.meter.exceeded()
	}
	if asked {
		resp, ok := r.callFormat(ctx, config.RoleReviewer, turn+1, st, conv, false, json.RawMessage(VerdictSchema), prev, "verdict request")
		if !ok {
			return "" // st says why
		}
		answer = resp.Message.Content
		conv.push(model.Message{Role: model.RoleAssistant, Content: answer})
		if _, ok := parseVerdict(answer); ok {
			return answer
		}
	}
	if empty {
		// The verdict request gave nothing usable either (nothing, or
		// text cut at maxFormatTokens): the cause is the empty reply.
		st.Status, st.Error = report.StatusUnverified, MsgReviewerVerdict+": "+MsgEmptyReply
		return ""
	}
	return content
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
