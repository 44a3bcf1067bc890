package agent

import (
	"strings"
	"testing"

	"flow/runtime/config"
	"flow/runtime/report"
)

const valueGo = "package a\n\n// Value is the answer.\nfunc Value() int {\n\treturn 1\n}\n\n// Other stays.\nfunc Other() int { return 0 }\n"

// valueCheck passes when Value returns 2.
func valueCheck() config.Check {
	return shCheck("lint", config.KindLint, []string{"go"}, "grep -q 'return 2' a.go")
}

// TestCoderAnswerCodeIsApplied: a coder that answers with the changed
// function in a code block, and no edit, has it applied by the host as a
// file_edit (marked as from the reply's text); the coder is done without a
// further call, its summary says what the host did, the checks and the
// reviewer judge the change, and the rest of the file is untouched.
func TestCoderAnswerCodeIsApplied(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": valueGo})
	answer := "Here is the fix:\n\n```go\nfunc Value() int {\n    return 2\n}\n```\n"
	be := newScripted(t, say("1. Make Value return 2."), say(answer), say(verdict(true, "ok")))
	h := newHarness(t, testConfig(dir, valueCheck()), be)
	rep := h.run(t, "make Value in a.go return 2")
	if rep.Status != report.StatusOK || !rep.Verified || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v (%s), %d replies left; want ok and verified with 3 model calls", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	want := "package a\n\n// Value is the answer.\nfunc Value() int {\n\treturn 2\n}\n\n// Other stays.\nfunc Other() int { return 0 }\n"
	if got := h.read(t, "a.go"); got != want {
		t.Errorf("a.go = %q, want %q (the function replaced, formatted, its comment and the rest kept)", got, want)
	}
	tools := toolEvents(rep)
	if len(tools) != 1 || tools[0].Tool != "file_edit" || tools[0].Status != report.StatusOK || !tools[0].FromText {
		t.Errorf("tool events = %+v, want one ok file_edit from the reply's text", tools)
	}
	coder := rep.Roles[1]
	if coder.Role != config.RoleCoder || !strings.HasPrefix(coder.Summary, "(The host applied the code of this answer to a.go with file_edit.)") {
		t.Errorf("coder summary = %q, want it to say the host applied the code", coder.Summary)
	}
	review := be.requests()[2].Messages[1].Content
	if !strings.Contains(review, "+\treturn 2") || strings.Contains(review, "The host applied the code") {
		t.Errorf("the reviewer is not shown the host's diff alone (without the coder's account):\n%s", review)
	}
}

// TestCoderAnswerCodeOff: with agent.answer_code = false the code of an
// answer is not applied; the coder gets the reminder instead.
func TestCoderAnswerCodeOff(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": valueGo})
	answer := "```go\nfunc Value() int {\n\treturn 2\n}\n```"
	be := newScripted(t, say("1. Make Value return 2."), say(answer), say("It needs no change."))
	cfg := testConfig(dir, valueCheck())
	cfg.Agent.AnswerCode = false
	h := newHarness(t, cfg, be)
	rep := h.run(t, "make Value in a.go return 2")
	if rep.Verified || len(toolEvents(rep)) != 0 || h.read(t, "a.go") != valueGo {
		t.Fatalf("answer_code = false: verified=%v, tools %+v; want no change", rep.Verified, toolEvents(rep))
	}
	second := be.requests()[2].Messages
	if last := second[len(second)-1]; last.Content != noChangeMessage(policy{}, []string{"lint"}) {
		t.Errorf("coder's second call ends with %q, want the reminder", last.Content)
	}
}

// TestCoderAnswerCodeIsNotAppliedTwice: code equal to the file's changes
// nothing, so the coder gets the reminder, and code in a coder's answer
// after it changed a file in the same invocation is its summary, not an
// edit.
func TestCoderAnswerCodeIsNotAppliedTwice(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": valueGo})
	same := "```go\nfunc Value() int {\n\treturn 1\n}\n```"
	after := "I changed it:\n```go\nfunc Value() int {\n\treturn 3\n}\n```"
	be := newScripted(t,
		say("1. Make Value return 2."),
		say(same),
		do(tc("c1", "file_edit", map[string]any{"path": "a.go", "old_string": "return 1", "new_string": "return 2"})),
		say(after),
		say(verdict(true, "ok")),
	)
	h := newHarness(t, testConfig(dir, valueCheck()), be)
	rep := h.run(t, "make Value in a.go return 2")
	if !rep.Verified || be.left() != 0 {
		t.Fatalf("Run() = %s verified=%v (%s), %d left; want verified", rep.Status, rep.Verified, rep.Reason, be.left())
	}
	if got := h.read(t, "a.go"); !strings.Contains(got, "return 2") {
		t.Errorf("a.go = %q: the summary's code was applied over the edit", got)
	}
	if msgs := be.requests()[2].Messages; msgs[len(msgs)-1].Content != noChangeMessage(policy{answerCode: true}, []string{"lint"}) {
		t.Errorf("code equal to the file's: the coder was not reminded (%q)", msgs[len(msgs)-1].Content)
	}
}

// FuzzEditRegion: the region editRegion picks occurs once in old, and
// replacing it gives new.
func FuzzEditRegion(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("x\nx\nx\n", "x\nx\ny\nx\n")
	f.Add("}\n\n}\n", "}\n\nfunc A() {}\n\n}\n")
	f.Add("one\n", "zero\none\n")
	f.Add("x\nx\nx", "x\n") // "x\nx" occurs twice, overlapping
	f.Fuzz(func(t *testing.T, old, new string) {
		if old == "" || old == new {
			return
		}
		region, repl := editRegion(old, new)
		if strings.Index(old, region) != strings.LastIndex(old, region) {
			t.Fatalf("region %q occurs %d times in %q", region, strings.Count(old, region), old)
		}
		if got := strings.Replace(old, region, repl, 1); got != new {
			t.Fatalf("replacing %q by %q in %q gives %q, want %q", region, repl, old, got, new)
		}
	})
}
