package agent

import (
	"context"
	"strconv"
	"strings"

	"flow/internal/text"
	"flow/runtime/model"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// call is one model call that the server answered: the reply, its
// model-call event so far and the prompt's size, until settle records it.
type call struct {
	resp  model.Response
	ev    report.Event
	chars int
}

// ask makes one model call of the invocation: it checks the prompt against
// the context window, counts the turn and emits the progress events around
// the call. A call the server did not answer is recorded here and ends the
// role; an answered one is recorded by settle once its tool calls are
// known. note goes into the model-call event.
func (s *session) ask(ctx context.Context, n int, req model.Request, note string) (call, *end) {
	r := s.r
	chars := s.conv.promptSize(req.Tools != nil)
	if msg := r.contextWindow(ctx, s.p.role, req.Model).before(chars); msg != "" {
		return call{}, &end{cause: causeContextOverflow, detail: strings.TrimPrefix(msg, MsgContextOverflow)}
	}
	// partial keeps what the call streamed, for the transcript of a call
	// that fails before its reply is complete (a timeout).
	var partial strings.Builder
	keep := r.deps.Transcript != nil && !r.transcriptOff
	if r.events != nil || keep {
		req.OnDelta = func(text string) {
			if keep {
				partial.WriteString(text)
			}
			if r.events != nil {
				r.emit(progress.Event{Kind: progress.ModelDelta, Role: s.p.role, Turn: n, Message: text})
			}
		}
	}
	s.turns++
	r.rec.modelCalls++
	size, novel := r.rec.prompt(req)
	r.emit(progress.Event{Kind: progress.ModelTurn, Role: s.p.role, Turn: n})
	t0 := r.deps.Now()
	stopBeat := r.heartbeat(s.p.role, n)
	resp, err := r.backend(s.p.role).Chat(ctx, req)
	stopBeat()
	if lost := s.transcribe(n, req, note, resp, err, partial.String()); lost != "" {
		note = strings.TrimPrefix(note+"; "+lost, "; ")
	}
	r.rec.usageOf(resp.Usage)
	ev := report.Event{
		Kind: report.EventModelCall, Role: s.p.role, Cycle: r.cycles, Turn: n, Status: report.StatusOK,
		DurationMS: r.deps.Now().Sub(t0).Milliseconds(), PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, DoneReason: resp.DoneReason, Note: note,
		PromptEvalMS: resp.PromptEval.Milliseconds(), PromptChars: size, NewPromptChars: novel,
	}
	if err != nil {
		e := end{cause: causeBackend, detail: err.Error()}
		if ctx.Err() != nil {
			e = end{cause: causeCancelled}
		}
		ev.Status, ev.Error = report.StatusError, e.message()
		r.rec.modelCall(ev, "")
		return call{}, &e
	}
	ev.NativeToolCalls, ev.Bytes = len(resp.Message.ToolCalls), len(resp.Message.Content)
	return call{resp: resp, ev: ev, chars: chars}, nil
}

// settle completes an answered call's model-call event with the tool calls
// found in the reply, checks the server's prompt count against the
// context window (s.prev is the invocation's previous call, and is
// updated) and records the call. A prompt the server evidently truncated
// ends the role.
func (s *session) settle(c call, ex extraction) *end {
	ev, content := c.ev, c.resp.Message.Content
	shown := len(ex.calls) // the calls the reply itself carried
	switch ex.source {
	case fromText:
		ev.TextToolCalls = len(ex.calls)
	case fromCode:
		shown = 0
	}
	if shown == 0 && strings.TrimSpace(content) == "" && ev.Note == "" {
		ev.Note = "empty reply"
	}
	preview := replyPreview(content, shown)
	tokens := c.resp.Usage.PromptTokens
	if msg := s.r.contextWindow(context.Background(), s.p.role, s.model).after(c.chars, tokens, s.prev); msg != "" {
		e := end{cause: causeContextOverflow, detail: strings.TrimPrefix(msg, MsgContextOverflow)}
		ev.Status, ev.Error = report.StatusError, e.message()
		s.r.rec.modelCall(ev, preview)
		return &e
	}
	if tokens > 0 {
		s.prev = promptSize{chars: c.chars, tokens: tokens}
	}
	s.r.rec.modelCall(ev, preview)
	return nil
}

// extractorSpec is one way a role's tool calls are found in a reply, in
// the declared precedence of [policy.extractors] (doc/design.md §6.6).
type extractorSpec struct {
	name    string
	extract extractor
	// givesWayToCode, when set, says when what this extractor found yields
	// to the code extractors' calls, if the reply's code changes a file.
	givesWayToCode func(ex extraction) bool
}

// extractors are the ways a role's tool calls are found, in order: the
// API's own, then calls written as text, then (for a coder in the
// whole-file format) the files its answer gives whole, then (for a coder
// with agent.answer_code) the code of an answer that changed no file. The
// first that finds any wins, except that calls written as text that
// change files or only ask for the checks give way to the reply's code:
// the code is the change the model means, and a call written out after it
// is a copy a small model garbles (a wrong path, a new_string with half
// the function); a check asked for is run by the host once the coder is
// done.
func (p policy) extractors() []extractorSpec {
	specs := []extractorSpec{
		{name: "native calls", extract: nativeCalls},
		{name: "text calls", extract: textCalls, givesWayToCode: editsOrChecks},
	}
	return append(specs, p.codeExtractors()...)
}

// codeExtractors are the extractors that make calls from the code an
// answer gives: the whole files (format whole), then the answer's code
// (agent.answer_code).
func (p policy) codeExtractors() []extractorSpec {
	var ex []extractorSpec
	if p.whole {
		ex = append(ex, extractorSpec{name: "whole files", extract: wholeCalls})
	}
	if p.answerCode {
		ex = append(ex, extractorSpec{name: "answer code", extract: codeCalls})
	}
	return ex
}

// editsOrChecks: the calls change files, or only ask for the checks.
func editsOrChecks(ex extraction) bool { return onlyChecks(ex.calls) || triedEdit(ex.calls) }

// extract returns the reply's tool calls by the precedence of
// [policy.extractors].
func (s *session) extract(ctx context.Context, resp model.Response) extraction {
	for _, x := range s.p.extractors() {
		ex, ok := x.extract(ctx, s, resp)
		if !ok {
			continue
		}
		if x.givesWayToCode != nil && x.givesWayToCode(ex) {
			if code, ok := s.codeChange(ctx, resp); ok {
				return code
			}
		}
		return ex
	}
	return extraction{}
}

// codeChange returns the calls of the first code extractor whose calls
// are not all refused.
func (s *session) codeChange(ctx context.Context, resp model.Response) (extraction, bool) {
	for _, cx := range s.p.codeExtractors() {
		if code, ok := cx.extract(ctx, s, resp); ok && len(code.refused) < len(code.calls) {
			return code, true
		}
	}
	return extraction{}, false
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

// onlyChecks says whether every call is flow_check.
func onlyChecks(calls []model.ToolCall) bool {
	for _, c := range calls {
		if c.Name != tools.FlowCheck {
			return false
		}
	}
	return len(calls) > 0
}

func nativeCalls(_ context.Context, _ *session, resp model.Response) (extraction, bool) {
	return extraction{calls: resp.Message.ToolCalls}, len(resp.Message.ToolCalls) > 0
}

// textCalls is where tool calls written as text become tool calls: the
// calls returned are executed exactly as native ones (same ids,
// validation and budgets) and counted as text_tool_calls in the model-call
// event. They come without ids; normaliseCalls gives them the synthesised
// ones it gives native calls that lack one.
func textCalls(_ context.Context, s *session, resp model.Response) (extraction, bool) {
	names := make([]string, len(s.conv.offered))
	for i, t := range s.conv.offered {
		names[i] = t.Name
	}
	calls := model.TextToolCalls(resp.Message.Content, names)
	return extraction{calls: calls, source: fromText}, len(calls) > 0
}

// codeCalls: a small model often answers with the changed code instead of
// an edit; while no file changed in this invocation, the answer's code is
// applied as the edits it stands for (answercode.go).
func codeCalls(ctx context.Context, s *session, resp model.Response) (extraction, bool) {
	if s.r.writes != s.writes {
		return extraction{}, false
	}
	calls, paths := s.r.codeCalls(ctx, resp.Message.Content)
	return extraction{calls: calls, source: fromCode, paths: paths}, len(calls) > 0
}

// replyPreview describes a model reply for progress events.
func replyPreview(content string, calls int) string {
	switch calls {
	case 0:
		return text.OneLine(content, 120)
	case 1:
		return "1 tool call"
	default:
		return strconv.Itoa(calls) + " tool calls"
	}
}
