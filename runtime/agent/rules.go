package agent

import (
	"context"
	"strings"

	"flow/internal/text"
	"flow/runtime/codeblock"
	"flow/runtime/model"
	"flow/runtime/report"
)

// The after-turn rules (doc/design.md §6.6). Each one looks at a finished
// turn and returns a decision: end the role with a typed cause, add a message
// and go on to the next turn, or pass. They run in order until one does
// not pass; a turn every rule passes goes on to the next one. Each rule
// keeps its own state (what it told the model so far) and reads no other
// rule's.

// newRules returns the after-turn rules of the session's role, in order,
// each with fresh state.
func (s *session) newRules() []rule {
	p := s.p
	rs := []rule{emptyReplyRule(p)}
	if p.review {
		rs = append(rs, rule{"verdict", s.verdictRule})
	}
	if p.nudge {
		rs = append(rs, noChangeRule(func(ctx context.Context, content string) string {
			var echoes []codeblock.Echo
			if p.whole {
				echoes = s.r.wholeEchoes(ctx, content)
			} else {
				echoes = s.r.echoes(ctx, content)
			}
			m := withEchoes(noChangeMessage(p, s.r.failing), echoes)
			if s.now != "" {
				m += "\n\nNow: " + s.now
			}
			return m
		}))
	}
	return append(rs,
		rule{"answered", answeredRule},
		rule{"code applied", codeAppliedRule},
		stuckRule(),
		repeatTurnRule(p),
	)
}

// emptyReplyRule: an empty reply (no text, no tool call: what a server
// hands on when the model's tool call did not parse) is not an answer. The
// first one in a row gets one corrective message naming the role's tools;
// the next one ends the role, unless its verdict request decides (the
// reviewer).
func emptyReplyRule(p policy) rule {
	told := false // the last reply was empty and the model was told so
	return rule{"empty reply", func(_ context.Context, t *turn) decision {
		if !t.empty {
			told = false
			return pass
		}
		if !told && !t.last {
			told = true
			return decision{say: emptyReplyMessage(p.allowed), blank: true}
		}
		if p.review {
			return pass
		}
		how := "no turn was left to ask again (max_iterations)"
		if told {
			how = "it was told once and replied empty again"
		}
		return stop(end{cause: causeEmptyReply, detail: how})
	}}
}

// noChangeRule: a coder that answers while no file changed in this
// invocation (with code that could not be applied, or with a claim that
// it changed a file) is told once that nothing was applied; message
// writes the reminder for the answer's content. The coder's reminder
// names the code the answer gives exactly as the workspace has it (a 1.5B
// coder often gave back the function it was shown and said the task was
// done) and ends with what its repair cycle asks for now (doc/design.md
// §6.6).
func noChangeRule(message func(ctx context.Context, content string) string) rule {
	nudged := false
	return rule{"no change", func(ctx context.Context, t *turn) decision {
		if len(t.calls.calls) > 0 || nudged || t.wrote || t.last {
			return pass
		}
		nudged = true
		return decision{say: message(ctx, t.content)}
	}}
}

// fixedMessage is a reminder that does not depend on the answer.
func fixedMessage(m string) func(context.Context, string) string {
	return func(context.Context, string) string { return m }
}

// withEchoes puts the sentence naming the echoed code after the first
// sentence of message.
func withEchoes(message string, echoes []codeblock.Echo) string {
	if len(echoes) == 0 {
		return message
	}
	var parts []string
	what := "The code it gives for "
	for _, e := range echoes {
		if len(e.Names) == 0 {
			// A whole file given back.
			what = "The file it gives for "
			parts = append(parts, e.Path)
			continue
		}
		parts = append(parts, joinWords(quoted(e.Names))+" ("+e.Path+")")
	}
	where := "the file already holds"
	if len(echoes) > 1 {
		where = "those files already hold"
	}
	note := what + joinWords(parts) + " is what " + where + ", word for word: giving it back changes nothing. "
	lead, rest, ok := strings.Cut(message, ". ")
	if !ok {
		return message + " " + strings.TrimSpace(note)
	}
	return lead + ". " + note + rest
}

// answeredRule: an answer without tool calls ends the role; the answer is
// what it hands on.
func answeredRule(_ context.Context, t *turn) decision {
	if len(t.calls.calls) > 0 {
		return pass
	}
	return stop(end{cause: causeAnswered, summary: text.Truncate(t.content, maxSummaryChars)})
}

// codeAppliedRule: once the answer's code is applied without an error
// (every call made from it ran and succeeded), the coder is done; its
// checks and the reviewer judge the change. A refused block (a whole file
// that leaves code out) keeps the coder going: it reads why.
func codeAppliedRule(_ context.Context, t *turn) decision {
	if len(t.code) == 0 {
		return pass
	}
	for _, res := range t.results {
		if res.status != report.StatusOK {
			return pass
		}
	}
	tool := "file_edit"
	if len(t.calls.calls) > 0 {
		tool = t.calls.calls[0].Name // file_write for whole files
	}
	summary := text.Truncate(msgCodeApplied(t.code, tool)+" "+t.content, maxSummaryChars)
	return stop(end{cause: causeCodeApplied, summary: summary})
}

// stuckRule: a turn whose calls have each failed twice before in this
// invocation ends the role: the next turns would only repeat them again.
func stuckRule() rule {
	failures := map[string]int{} // failing results per call (callKey)
	return rule{"stuck", func(_ context.Context, t *turn) decision {
		stuck, judged := true, false
		for _, res := range t.results {
			if res.refused {
				continue
			}
			judged = true
			if res.status != report.StatusError {
				stuck = false
				continue
			}
			if failures[res.key] < 2 {
				stuck = false
			}
			failures[res.key]++
		}
		if !stuck || !judged {
			return pass
		}
		return stop(end{cause: causeStuck})
	}}
}

// repeatTurnRule: a turn that only repeats the previous turn's calls (none
// run, at least one answered from the earlier result) gets one message
// saying that the next such turn ends the role; the next one does. A role
// whose policy is done after repeats and that changed files finishes ok.
// In the evaluation's real-model runs, a role that had made a turn of
// repeats never made a new call afterwards.
func repeatTurnRule(p policy) rule {
	warned := false
	return rule{"repeat turn", func(_ context.Context, t *turn) decision {
		ran, repeated := false, false
		for _, res := range t.results {
			ran = ran || res.ran
			repeated = repeated || res.repeated
		}
		switch {
		case ran || !repeated:
			warned = false
			return pass
		case !warned && t.last:
			return pass // told nothing; the iteration budget ends the role
		case !warned:
			warned = true
			return decision{say: msgRepeatTurn(p.role)}
		case p.doneAfterRepeats && t.wrote:
			e := end{cause: causeRepeatDone}
			if strings.TrimSpace(t.content) == "" {
				e.summary = msgRepeatDone
			}
			return stop(e)
		}
		return stop(end{cause: causeRepeating})
	}}
}

// verdictRule ends a reviewer whose answer had no tool calls with its
// verdict. An answer without a parsable verdict is
// followed by the verdict request (one call without tools, with the
// verdict's JSON Schema as the structured-output format), when a turn is
// left; its answer is used if it parses, else the first answer stays, for
// the usual parsing (bare, fenced, last object). An empty answer with no
// parsable verdict after it leaves the change unjudged, naming the empty
// reply.
func (s *session) verdictRule(ctx context.Context, t *turn) decision {
	if len(t.calls.calls) > 0 {
		return pass
	}
	s.summary = text.Truncate(t.content, maxSummaryChars)
	if v, ok := parseVerdict(t.content); ok {
		return stop(end{cause: causeVerdict, verdict: &v})
	}
	if !t.last && ctx.Err() == nil {
		s.conv.push(model.Message{Role: model.RoleUser, Content: verdictRequest})
		if !s.conv.exceeded() {
			c, e := s.ask(ctx, t.n+1, formatRequest(s.model, s.conv, VerdictSchema), "verdict request")
			if e == nil {
				e = s.settle(c, extraction{})
			}
			if e != nil {
				return stop(*e)
			}
			answer := c.resp.Message.Content
			s.conv.push(model.Message{Role: model.RoleAssistant, Content: answer})
			if v, ok := parseVerdict(answer); ok {
				return stop(end{cause: causeVerdict, verdict: &v})
			}
		}
	}
	return stop(end{cause: causeNoVerdict, empty: t.empty})
}

// msgCodeApplied opens the summary of a coder whose answer's code the host
// applied to paths.
func msgCodeApplied(paths []string, tool string) string {
	return "(The host applied the code of this answer to " + strings.Join(paths, ", ") + " with " + tool + ".)"
}

// msgRepeatDone is the summary of a coder that changed files and then only
// repeated its calls, when its last reply had no text.
const msgRepeatDone = "(the coder repeated its last calls after changing files; its change is judged as it stands)"

// The reminder a coder gets when it answers (with code that could not be
// applied, or saying what it changed) but has changed no file: what
// changed nothing, and how to make the change in the coder's edit format.
// msgNoChange is the plain form, msgNoChangeCode the one with
// agent.answer_code on, msgNoChangeWhole the whole-file format's; each
// ends with msgNoChangeEscape.
const (
	msgNoChange       = "Your answer changed no file: only file_edit and file_write change files. Make the change now with a file_edit call (or file_write for a new or wholly rewritten file)." + msgNoChangeEscape
	msgNoChangeCode   = "Your answer changed no file. Make the change now: call file_edit, or answer with each whole changed function (or the whole file) in a fenced code block, which the host applies." + msgNoChangeEscape
	msgNoChangeWhole  = "Your answer changed no file. Make the change now: give the complete new content of each file you change, its path on a line of its own and then the whole file in a fenced code block, which the host writes." + msgNoChangeEscape
	msgNoChangeEscape = " If the task really needs no further change, answer again without code and say why."
)

// noChangeMessage is the reminder of policy p's coder. failing are the
// required checks that failed when the host last ran them (the baseline,
// or the last cycle's verification): with nothing changed since, they
// still fail, so the task is not done, and the reminder says so instead
// of leaving the way out of answering that no change is needed
// (doc/design.md §6.6). A 1.5B coder took that way out when told its
// failing test already passed.
func noChangeMessage(p policy, failing []string) string {
	m := msgNoChange
	switch {
	case p.whole:
		m = msgNoChangeWhole
	case p.answerCode:
		m = msgNoChangeCode
	}
	if len(failing) == 0 {
		return m
	}
	m = strings.TrimSuffix(m, msgNoChangeEscape)
	checks := "check " + quoteList(failing) + " still fails"
	if len(failing) > 1 {
		checks = "checks " + quoteList(failing) + " still fail"
	}
	lead, rest, _ := strings.Cut(m, ". ")
	return lead + ", and the required " + checks + ", so the task is not done. " + rest
}

// quoteList joins names as "a", "a and b" or "a, b and c", each in
// backquotes.
func quoteList(names []string) string {
	return joinWords(quoted(names))
}

// quoted returns names, each in backquotes.
func quoted(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return q
}

// joinWords joins words as "a", "a and b" or "a, b and c".
func joinWords(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
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
