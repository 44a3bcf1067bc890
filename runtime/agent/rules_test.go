package agent

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"flow/runtime/codeblock"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/report"
)

// The after-turn rules, each alone: a sequence of turns goes in, the
// decision on each comes out. A rule keeps its state across the turns of
// one sequence, as it does across the turns of one invocation.

// want is a rule's expected decision on one turn: "pass", "say:<part of
// the message>", or "end:<cause>" (with "+blank" for a blank reply).
type want string

func decisionOf(d decision) want {
	switch {
	case d.end != nil:
		return want("end:" + causeNames[d.end.cause])
	case d.say != "" && d.blank:
		return "say+blank:" + want(d.say)
	case d.say != "":
		return "say:" + want(d.say)
	}
	return "pass"
}

var causeNames = map[cause]string{
	causeAnswered: "answered", causeCodeApplied: "code applied", causeRepeatDone: "repeat done",
	causeVerdict: "verdict", causeSkipped: "skipped", causeIterationBudget: "iteration budget",
	causeToolCallBudget: "tool-call budget", causeContextBudget: "context budget", causeStuck: "stuck",
	causeRepeating: "repeating", causeNoVerdict: "no verdict", causeEmptyReply: "empty reply",
	causeBackend: "backend", causeContextOverflow: "context overflow", causeSetup: "setup",
	causeCancelled: "cancelled",
}

// match reports whether got is w: the same kind, and for a message one
// that contains w's text.
func (w want) match(got want) bool {
	kind, text, _ := strings.Cut(string(w), ":")
	gkind, gtext, _ := strings.Cut(string(got), ":")
	return kind == gkind && strings.Contains(gtext, text)
}

type ruleCase struct {
	name  string
	turns []*turn
	want  []want
}

func runRule(t *testing.T, newRule func() rule, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRule()
			for i, tn := range c.turns {
				if tn.n == 0 {
					tn.n = i + 1
				}
				got := decisionOf(r.apply(t.Context(), tn))
				if !c.want[i].match(got) {
					t.Errorf("%s on turn %d = %q, want %q", r.name, i+1, got, c.want[i])
				}
			}
		})
	}
}

// turns of a kind, for the tables.
func empty() *turn { return &turn{empty: true} }
func lastEmpty() *turn {
	return &turn{empty: true, last: true}
}
func answerTurn(text string) *turn { return &turn{content: text} }
func withCalls(results ...callResult) *turn {
	t := &turn{results: results}
	for range results {
		t.calls.calls = append(t.calls.calls, model.ToolCall{Name: "file_read"})
	}
	return t
}
func ran(key, status string) callResult { return callResult{key: key, status: status, ran: true} }
func repeated(key, status string) callResult {
	return callResult{key: key, status: status, repeated: true}
}
func refused(key string) callResult {
	return callResult{key: key, status: report.StatusError, refused: true}
}

func TestEmptyReplyRule(t *testing.T) {
	coder := policy{role: config.RoleCoder, offered: []model.Tool{{Name: "file_read"}, {Name: "file_edit"}, {Name: "editor_symbols"}}, allowed: []model.Tool{{Name: "file_read"}, {Name: "file_edit"}}}
	reviewer := policy{role: config.RoleReviewer, review: true}
	runRule(t, func() rule { return emptyReplyRule(coder) }, []ruleCase{
		{"told once, then the role ends", []*turn{empty(), empty()},
			[]want{"say+blank:The tools you can call are: file_read, file_edit. Call", "end:empty reply"}},
		{"a reply in between resets it", []*turn{empty(), answerTurn("x"), empty()},
			[]want{"say+blank:empty", "pass", "say+blank:empty"}},
		{"calls are a reply", []*turn{empty(), withCalls(ran("a", "ok")), empty()},
			[]want{"say+blank:", "pass", "say+blank:"}},
		{"no turn left to ask again", []*turn{lastEmpty()}, []want{"end:empty reply"}},
	})
	runRule(t, func() rule { return emptyReplyRule(reviewer) }, []ruleCase{
		{"the reviewer's verdict request decides", []*turn{empty(), empty()}, []want{"say+blank:", "pass"}},
	})
	// How the role ended is in the error.
	r := emptyReplyRule(coder)
	r.apply(t.Context(), empty())
	if d := r.apply(t.Context(), empty()); d.end == nil || !strings.Contains(d.end.message(), "it was told once and replied empty again") {
		t.Errorf("second empty reply = %+v, want the error to say it was told", d.end)
	}
	if d := emptyReplyRule(coder).apply(t.Context(), lastEmpty()); d.end == nil || !strings.Contains(d.end.message(), "no turn was left") {
		t.Errorf("empty last reply = %+v, want the error to say no turn was left", d.end)
	}
}

func TestNoChangeRule(t *testing.T) {
	wrote := &turn{content: "done", wrote: true}
	last := &turn{content: "done", last: true}
	coder := policy{role: config.RoleCoder}
	runRule(t, func() rule { return noChangeRule(fixedMessage(noChangeMessage(coder, nil))) }, []ruleCase{
		{"told once", []*turn{answerTurn("I changed a.go"), answerTurn("I changed a.go")},
			[]want{"say:only file_edit and file_write change files", "pass"}},
		{"a change was made", []*turn{wrote}, []want{"pass"}},
		{"calls are not an answer", []*turn{withCalls(ran("a", "ok"))}, []want{"pass"}},
		{"no turn left", []*turn{last}, []want{"pass"}},
	})
	runRule(t, func() rule { return noChangeRule(fixedMessage(noChangeMessage(policy{answerCode: true}, nil))) }, []ruleCase{
		{"with answer code it names code blocks", []*turn{answerTurn("x")}, []want{"say:in a fenced code block, which the host applies"}},
	})
	runRule(t, func() rule {
		return noChangeRule(fixedMessage(noChangeMessage(policy{whole: true, answerCode: true}, nil)))
	}, []ruleCase{
		{"in the whole-file format it asks for whole files", []*turn{answerTurn("x")}, []want{"say:then the whole file in a fenced code block, which the host writes"}},
	})
}

// TestNoChangeNamesEchoes: when the answer gave back code as the workspace
// has it, the reminder names that code and its files after its first
// sentence, and keeps the rest; without echoes it is unchanged.
func TestNoChangeNamesEchoes(t *testing.T) {
	base := noChangeMessage(policy{answerCode: true}, []string{"test"})
	echoing := func(found ...codeblock.Echo) func() rule {
		return func() rule {
			return noChangeRule(func(context.Context, string) string { return withEchoes(base, found) })
		}
	}
	runRule(t, echoing(codeblock.Echo{Path: "strings.js", Names: []string{"camelCase"}}), []ruleCase{
		{"one file", []*turn{answerTurn("```js\n...\n```")}, []want{"say:still fails, so the task is not done. The code it gives for `camelCase` (strings.js) is what the file already holds, word for word: giving it back changes nothing. Make the change now"}},
	})
	runRule(t, echoing(
		codeblock.Echo{Path: "stats.go", Names: []string{"Mean", "Median"}},
		codeblock.Echo{Path: "stats_test.go", Names: []string{"TestMean"}}), []ruleCase{
		{"two files", []*turn{answerTurn("x")}, []want{"say:The code it gives for `Mean` and `Median` (stats.go) and `TestMean` (stats_test.go) is what those files already hold"}},
	})
	if got := withEchoes(base, nil); got != base {
		t.Errorf("withEchoes without echoes = %q, want %q", got, base)
	}
}

// TestNoChangeWhileChecksFail: while a required check still fails, the
// reminder names it, says that the task is not done and leaves out the way
// out of answering that no change is needed, in every edit format.
func TestNoChangeWhileChecksFail(t *testing.T) {
	for _, p := range []policy{{}, {answerCode: true}, {whole: true, answerCode: true}} {
		open := noChangeMessage(p, nil)
		if !strings.HasSuffix(open, msgNoChangeEscape) {
			t.Errorf("%+v without failing checks: %q, want it to end with the way out", p, open)
		}
		one := noChangeMessage(p, []string{"test"})
		two := noChangeMessage(p, []string{"vet", "test"})
		for _, c := range []struct{ got, names string }{{one, "check `test` still fails"}, {two, "checks `vet` and `test` still fail"}} {
			if strings.Contains(c.got, "needs no further change") || !strings.Contains(c.got, "the required "+c.names+", so the task is not done. Make the change now") {
				t.Errorf("%+v with failing checks: %q, want %q named and no way out", p, c.got, c.names)
			}
		}
		// The how-to of the format is kept.
		if _, how, _ := strings.Cut(open, "Make the change now"); !strings.Contains(one, strings.TrimSuffix(how, msgNoChangeEscape)) {
			t.Errorf("%+v: %q lost the format's instructions %q", p, one, how)
		}
	}
	if got := quoteList([]string{"a", "b", "c"}); got != "`a`, `b` and `c`" {
		t.Errorf("quoteList = %q", got)
	}
}

func TestAnsweredRule(t *testing.T) {
	runRule(t, func() rule { return rule{"answered", answeredRule} }, []ruleCase{
		{"an answer ends the role", []*turn{answerTurn("the plan")}, []want{"end:answered"}},
		{"calls go on", []*turn{withCalls(ran("a", "ok"))}, []want{"pass"}},
	})
	d := answeredRule(t.Context(), answerTurn(strings.Repeat("é", maxSummaryChars+10)))
	if n := len([]rune(d.end.summary)); n != maxSummaryChars {
		t.Errorf("summary of a long answer has %d characters, want %d", n, maxSummaryChars)
	}
}

func TestCodeAppliedRule(t *testing.T) {
	code := func(results ...callResult) *turn {
		tn := withCalls(results...)
		for i := range tn.calls.calls {
			tn.calls.calls[i].Name = "file_edit"
		}
		tn.code, tn.content = []string{"a.go"}, "```go\n...\n```"
		return tn
	}
	runRule(t, func() rule { return rule{"code applied", codeAppliedRule} }, []ruleCase{
		{"applied", []*turn{code(ran("e", "ok"))}, []want{"end:code applied"}},
		{"a failed edit goes on", []*turn{code(ran("e", "ok"), ran("f", "error"))}, []want{"pass"}},
		{"the model's own calls go on", []*turn{withCalls(ran("e", "ok"))}, []want{"pass"}},
	})
	d := codeAppliedRule(t.Context(), code(ran("e", "ok")))
	if !strings.HasPrefix(d.end.summary, "(The host applied the code of this answer to a.go with file_edit.)") {
		t.Errorf("summary = %q, want it to say the host applied the code", d.end.summary)
	}
	whole := code(ran("w", "ok"))
	whole.calls.calls[0].Name = "file_write"
	if d := codeAppliedRule(t.Context(), whole); !strings.HasPrefix(d.end.summary, "(The host applied the code of this answer to a.go with file_write.)") {
		t.Errorf("whole-file summary = %q, want it to name file_write", d.end.summary)
	}
}

func TestStuckRule(t *testing.T) {
	failA := func() *turn { return withCalls(ran("a", report.StatusError)) }
	runRule(t, func() rule { return stuckRule() }, []ruleCase{
		{"a third failure of the same call", []*turn{failA(), failA(), failA()}, []want{"pass", "pass", "end:stuck"}},
		{"answered from the previous turn counts", []*turn{failA(), withCalls(repeated("a", report.StatusError)), failA()},
			[]want{"pass", "pass", "end:stuck"}},
		{"a success in the turn", []*turn{failA(), failA(), withCalls(ran("a", report.StatusError), ran("b", "ok"))},
			[]want{"pass", "pass", "pass"}},
		{"a different call", []*turn{failA(), failA(), withCalls(ran("b", report.StatusError))}, []want{"pass", "pass", "pass"}},
		{"a status that is not an error", []*turn{failA(), failA(), withCalls(ran("a", report.StatusUnverified))},
			[]want{"pass", "pass", "pass"}},
		// Calls refused for a duplicate id were never run: a turn of them
		// is not a repeated failure.
		{"only refused calls", []*turn{withCalls(refused("a"), refused("a"))}, []want{"pass"}},
	})
}

func TestRepeatTurnRule(t *testing.T) {
	coder := policy{role: config.RoleCoder, doneAfterRepeats: true}
	planner := policy{role: config.RolePlanner}
	rep := func() *turn { return withCalls(repeated("a", "ok")) }
	repWrote := func(text string) *turn {
		tn := rep()
		tn.wrote, tn.content = true, text
		return tn
	}
	runRule(t, func() rule { return repeatTurnRule(planner) }, []ruleCase{
		{"warned, then ended", []*turn{rep(), rep()}, []want{"say:Answer now with your plan", "end:repeating"}},
		{"a new call resets the warning", []*turn{rep(), withCalls(ran("b", "ok")), rep()},
			[]want{"say:Repeating them once more ends your turn", "pass", "say:"}},
		{"mixed with a new call is no repeat", []*turn{withCalls(repeated("a", "ok"), ran("b", "ok"))}, []want{"pass"}},
		{"refused calls are no repeat", []*turn{withCalls(refused("a"))}, []want{"pass"}},
		{"nothing to warn on the last turn", []*turn{{results: []callResult{repeated("a", "ok")}, last: true}}, []want{"pass"}},
	})
	runRule(t, func() rule { return repeatTurnRule(coder) }, []ruleCase{
		{"a coder that changed files is done", []*turn{rep(), repWrote("")}, []want{"say:If your change is made", "end:repeat done"}},
		{"a coder that changed nothing is not", []*turn{rep(), rep()}, []want{"say:", "end:repeating"}},
	})
	r := repeatTurnRule(coder)
	r.apply(t.Context(), rep())
	if d := r.apply(t.Context(), repWrote("")); d.end.summary != msgRepeatDone {
		t.Errorf("summary of a silent repeat = %q, want %q", d.end.summary, msgRepeatDone)
	}
	r = repeatTurnRule(coder)
	r.apply(t.Context(), rep())
	if d := r.apply(t.Context(), repWrote("edited a.go")); d.end.summary != "" {
		t.Errorf("summary of a repeat with text = %q, want the reply's own (none set by the rule)", d.end.summary)
	}
}

// TestVerdictRule drives the reviewer's rule through a real session, since
// its verdict request is a model call.
func TestVerdictRule(t *testing.T) {
	cases := []struct {
		name   string
		turn   *turn
		steps  []step // the verdict request's answer, when one is made
		cause  cause
		calls  int
		approv *bool
	}{
		{"a verdict in the answer", answerTurn("ok:\n" + verdict(true, "fine")), nil, causeVerdict, 0, ptr(true)},
		{"a rejection", answerTurn(verdict(false, "wrong", "misses +")), nil, causeVerdict, 0, ptr(false)},
		{"asked for with structured output", answerTurn("looks good"), []step{say(verdict(true, "fine"))}, causeVerdict, 1, ptr(true)},
		{"the request answers no verdict", answerTurn("looks good"), []step{say("still prose")}, causeNoVerdict, 1, nil},
		{"no turn left to ask", &turn{content: "looks good", last: true}, nil, causeNoVerdict, 0, nil},
		{"calls go on", withCalls(ran("a", "ok")), nil, cause(-1), 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := newScripted(t, c.steps...)
			h := newHarness(t, testConfig(workspace(t, nil)), be)
			r := h.agent.start("review", nil)
			if err := r.setup(t.Context()); err != nil {
				t.Fatal(err)
			}
			s := newSession(r.env, r.policyFor(config.RoleReviewer), 1)
			s.conv.push(model.Message{Role: model.RoleSystem, Content: "review"})
			d := s.verdictRule(t.Context(), c.turn)
			if c.cause < 0 {
				if d.decided() {
					t.Fatalf("verdict rule on a turn with calls = %+v, want pass", d)
				}
				return
			}
			if d.end == nil || d.end.cause != c.cause {
				t.Fatalf("verdict rule = %+v, want cause %s", d.end, causeNames[c.cause])
			}
			reqs := be.requests()
			if len(reqs) != c.calls {
				t.Fatalf("%d verdict requests, want %d", len(reqs), c.calls)
			}
			if c.calls > 0 && (string(reqs[0].Format) != VerdictSchema || !reflect.DeepEqual(reqs[0].Tools, s.conv.offered) || reqs[0].MaxTokens != maxFormatTokens) {
				t.Errorf("verdict request = format %s, %d tools, max tokens %d; want the schema, the shared tools, %d", reqs[0].Format, len(reqs[0].Tools), reqs[0].MaxTokens, maxFormatTokens)
			}
			o := s.outcome(*d.end)
			if (o.Approved == nil) != (c.approv == nil) || (o.Approved != nil && *o.Approved != *c.approv) {
				t.Errorf("approved = %v, want %v", o.Approved, c.approv)
			}
		})
	}
}

// TestJudgeFirstDecisionWins: the rules run in order and stop at the first
// that decides; a later rule does not see that turn.
func TestJudgeFirstDecisionWins(t *testing.T) {
	var seen []string
	mk := func(name string, d decision) rule {
		return rule{name, func(context.Context, *turn) decision { seen = append(seen, name); return d }}
	}
	s := &session{conv: newConversation(1<<20, nil, true)}
	s.conv.push(model.Message{Role: model.RoleAssistant, Content: "  "})
	s.rules = []rule{mk("a", pass), mk("b", decision{say: "told", blank: true}), mk("c", stop(end{cause: causeStuck}))}
	if e := s.judge(t.Context(), &turn{}); e != nil {
		t.Fatalf("judge = %+v, want the turn to go on", e)
	}
	if strings.Join(seen, ",") != "a,b" {
		t.Errorf("rules run = %v, want a,b", seen)
	}
	if m := s.conv.msgs; len(m) != 2 || m[0].Content != "" || m[1].Content != "told" || m[1].Role != model.RoleUser {
		t.Errorf("conversation = %+v, want the blanked reply and the message", m)
	}
	if got, want := s.conv.size(), jsonChars([]model.Message{{Role: model.RoleAssistant}, {Role: model.RoleUser, Content: "told"}}); got != want {
		t.Errorf("size after the blank = %d, want %d", got, want)
	}
	seen = nil
	s.rules = []rule{mk("a", stop(end{cause: causeStuck})), mk("b", pass)}
	if e := s.judge(t.Context(), &turn{}); e == nil || e.cause != causeStuck || strings.Join(seen, ",") != "a" {
		t.Errorf("judge = %+v after %v, want stuck from a alone", e, seen)
	}
}

// TestPolicies: the one place roles differ.
func TestPolicies(t *testing.T) {
	cfg := testConfig(workspace(t, nil))
	cfg.Agent.AnswerCode = true
	h := newHarness(t, cfg, newScripted(t))
	r := h.agent.start("t", nil)
	if err := r.setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	type view struct {
		maxTokens                                                int
		answerCode, nudge, review, doneAfterRepeats, showChanged bool
		format                                                   string
		extractors                                               int
		rules                                                    string
	}
	got := map[string]view{}
	for _, role := range []string{config.RolePlanner, config.RoleCoder, config.RoleReviewer} {
		p := r.policyFor(role)
		var names []string
		for _, rl := range newSession(r.env, p, 1).rules {
			names = append(names, rl.name)
		}
		got[role] = view{p.maxTokens, p.answerCode, p.nudge, p.review, p.doneAfterRepeats, p.showChanged, p.format, len(p.extractors()), strings.Join(names, ", ")}
		// Every role declares the same tools; each may call only its own.
		if !reflect.DeepEqual(p.offered, r.policyFor(config.RoleCoder).offered) || len(p.allowed) == 0 {
			t.Errorf("%s offers %d tools, allows %d; want the coder's list offered to every role", role, len(p.offered), len(p.allowed))
		}
	}
	want := map[string]view{
		config.RolePlanner:  {maxReadOnlyReplyTokens, false, false, false, false, false, "", 2, "empty reply, answered, code applied, stuck, repeat turn"},
		config.RoleCoder:    {0, true, true, false, true, true, "", 3, "empty reply, no change, answered, code applied, stuck, repeat turn"},
		config.RoleReviewer: {maxFormatTokens, false, false, true, false, false, VerdictSchema, 2, "empty reply, verdict, answered, code applied, stuck, repeat turn"},
	}
	for role, w := range want {
		if got[role] != w {
			t.Errorf("policy of %s = %+v, want %+v", role, got[role], w)
		}
	}
	// Untrusted, the coder neither applies code nor is nudged.
	r.cfg.Trusted = false
	if p := r.policyFor(config.RoleCoder); p.answerCode || p.nudge {
		t.Errorf("untrusted coder policy = %+v, want no answer code and no nudge", p)
	}
}

// TestEndings: every cause has a status, and the non-ok ones an error the
// report keeps and a reason that names the role.
func TestEndings(t *testing.T) {
	cfg := config.Default()
	for c, name := range causeNames {
		e := end{cause: c, detail: "detail"}
		st := e.status()
		switch c {
		case causeAnswered, causeCodeApplied, causeRepeatDone, causeVerdict:
			if st != report.StatusOK || e.message() != "" {
				t.Errorf("%s: status %s, error %q; want ok without error", name, st, e.message())
			}
			continue
		case causeSkipped:
			if st != report.StatusSkipped {
				t.Errorf("%s: status %s, want skipped", name, st)
			}
			continue
		}
		if st == report.StatusOK || e.message() == "" {
			t.Errorf("%s: status %s, error %q; want a failure with an error", name, st, e.message())
		}
		if r := e.reason(&cfg, "coder"); r == "" || (c != causeCancelled && c != causeNoVerdict && !strings.Contains(r, "coder")) {
			t.Errorf("%s: reason %q, want a sentence naming the role", name, r)
		}
	}
}
