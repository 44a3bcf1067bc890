package agent

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/runtime/codeblock"
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
	if last := second[len(second)-1]; last.Content != noChangeMessage(policy{}, []string{"lint"})+"\n\nNow: "+nowWithTask(nowCoder, "make Value in a.go return 2") {
		t.Errorf("coder's second call ends with %q, want the reminder", last.Content)
	}
}

// TestCoderAnswerCodeIsNotAppliedTwice: code equal to the file's changes
// nothing, so the coder gets the reminder, which names the code it gave
// back and its file, and code in a coder's answer
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
	want := withEchoes(noChangeMessage(policy{answerCode: true}, []string{"lint"}), []codeblock.Echo{{Path: "a.go", Names: []string{"Value"}}}) +
		"\n\nNow: " + nowWithTask(nowCoder, "make Value in a.go return 2")
	if msgs := be.requests()[2].Messages; msgs[len(msgs)-1].Content != want {
		t.Errorf("code equal to the file's: reminder %q, want %q", msgs[len(msgs)-1].Content, want)
	}
	if !strings.Contains(want, "`Value` (a.go) is what the file already holds") {
		t.Errorf("the reminder does not name the code given back: %q", want)
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

// TestCodeBeforeTextCalls: a coder's reply gives the changed function in
// a code block and then a file_edit call written as text (as the 1.5B
// model wrote in real runs: an old_string that matches nothing, a path
// that does not exist, or an edit that pastes half the function over its
// first line). The reply's code is applied and the text calls that would
// change files are not run; the coder is done. When the code changes
// nothing (it is the file's own), the text call runs; a text call that
// only reads leaves the code alone; with the answer's code off the text
// call is all there is. In the whole-file format the reply's whole file
// is the code.
func TestCodeBeforeTextCalls(t *testing.T) {
	code := "Here is the fix:\n\n```go\nfunc Value() int {\n\treturn 2\n}\n```\n\n"
	call := func(old, new string) string {
		args, _ := json.Marshal(map[string]any{"name": "file_edit", "arguments": map[string]string{"path": "a.go", "old_string": old, "new_string": new}})
		return "Apply it with:\n\n```json\n" + string(args) + "\n```\n"
	}
	wrong := call("if x { return 1 }", "if x { return 2 }")
	whole := "a.go\n```go\n" + strings.Replace(valueGo, "return 1", "return 2", 1) + "```\n\n" + wrong
	read := "```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"a.go\"}}\n```\n"
	echo := "Here is the function:\n\n```go\nfunc Value() int {\n\treturn 1\n}\n```\n\n"
	for _, tc := range []struct {
		name       string
		reply      string
		format     string
		answerCode bool
		want       string   // a.go's Value body after the coder's turn
		tools      []string // the coder's tool events: tool and status
		applied    bool     // the coder's summary says the host applied code
	}{
		{"failed edit, then the code", code + wrong, config.EditTools, true, "return 2", []string{"file_edit ok"}, true},
		{"failed edit, answer code off", code + wrong, config.EditTools, false, "return 1", []string{"file_edit error"}, false},
		{"an edit that would change the file otherwise", code + call("\treturn 1", "\treturn 3"), config.EditTools, true, "return 2", []string{"file_edit ok"}, true},
		{"an edit after the file's own code", echo + call("\treturn 1", "\treturn 3"), config.EditTools, true, "return 3", []string{"file_edit ok"}, false},
		{"an edit, answer code off", code + call("\treturn 1", "\treturn 3"), config.EditTools, false, "return 3", []string{"file_edit ok"}, false},
		{"a read, not an edit", code + read, config.EditTools, true, "return 1", []string{"file_read ok"}, false},
		{"failed edit, then the whole file", whole, config.EditWhole, false, "return 2", []string{"file_write ok"}, true},
		{"an edit after a whole file that leaves code out", "a.go\n```go\npackage a\n\n// ... rest unchanged\n\nfunc Value() int {\n\treturn 2\n}\n```\n\n" + call("\treturn 1", "\treturn 2"), config.EditWhole, false, "return 2", []string{"file_edit ok"}, false},
		{"a check after the code", code + "Then:\nflow_check {}\n", config.EditTools, true, "return 2", []string{"file_edit ok"}, true},
		{"a check as JSON after the code", code + "```json\n{\"name\": \"flow_check\", \"arguments\": {}}\n```\n", config.EditTools, true, "return 2", []string{"file_edit ok"}, true},
		{"a check after the code, answer code off", code + "flow_check {}\n", config.EditTools, false, "return 1", []string{"flow_check failed"}, false},
		{"a check after a whole file", "a.go\n```go\n" + strings.Replace(valueGo, "return 1", "return 2", 1) + "```\n\nflow_check {}\n", config.EditWhole, false, "return 2", []string{"file_write ok"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": valueGo})
			// The coder's next reply (when it gets a turn) changes
			// nothing; the reviewer rejects, so each case ends after
			// one cycle whatever the coder did.
			cfg := testConfig(dir, valueCheck())
			cfg.Agent.MaxCycles = 1
			cfg.Agent.MaxIterations = 2
			cfg.Agent.AnswerCode = tc.answerCode
			cfg.Agent.EditFormat = tc.format
			be := newScripted(t, say("1. Make Value return 2."), say(tc.reply), say("Done."), say(verdict(false, "no", "not checked")))
			h := newHarness(t, cfg, be)
			rep := h.run(t, "make Value in a.go return 2")
			if got := h.read(t, "a.go"); !strings.Contains(got, "\t"+tc.want+"\n") {
				t.Errorf("a.go = %q, want Value to %s", got, tc.want)
			}
			var got []string
			for _, e := range toolEvents(rep) {
				if e.Role == config.RoleCoder {
					got = append(got, e.Tool+" "+e.Status)
					if !e.FromText {
						t.Errorf("tool event %+v not marked from the reply's text", e)
					}
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.tools, ", ") {
				t.Errorf("the coder ran %q, want %q", got, tc.tools)
			}
			coder := rep.Roles[1]
			if applied := strings.HasPrefix(coder.Summary, "(The host applied the code of this answer to a.go"); applied != tc.applied {
				t.Errorf("coder summary %q: applied = %t, want %t", coder.Summary, applied, tc.applied)
			}
			// No tool call id is used twice.
			ids := map[string]bool{}
			for _, e := range toolEvents(rep) {
				if ids[e.ToolCallID] {
					t.Errorf("tool call id %q used twice", e.ToolCallID)
				}
				ids[e.ToolCallID] = true
			}
		})
	}
}

// TestCodeBeforeTextCallsReplay replays a real reply of the 1.5B coder
// (go-stats-median, run Q of doc/eval.md §4): a correct Median in a code
// block, then a file_edit written as text that pastes Mean's body over
// Median's first line. Run, that call left a file that does not parse;
// the reply's code is applied instead, and stats.go parses with the
// even-length median.
func TestCodeBeforeTextCallsReplay(t *testing.T) {
	reply := readTestdata(t, "replies/median-code-then-edit.txt")
	stats := readTestdata(t, "replies/median-stats.go.txt")
	dir := workspace(t, map[string]string{"stats.go": stats})
	cfg := testConfig(dir, shCheck("median", config.KindTest, []string{"go"}, "grep -q 's\\[mid-1\\]' stats.go"))
	cfg.Agent.MaxCycles = 1
	cfg.Agent.MaxIterations = 2
	be := newScripted(t, say("1. Fix Median."), say(reply), say("Done."), say(verdict(true, "ok")))
	h := newHarness(t, cfg, be)
	rep := h.run(t, "go test fails in TestMedianEven. Fix Median in stats.go so that the tests pass.")
	got := h.read(t, "stats.go")
	if _, err := parser.ParseFile(token.NewFileSet(), "stats.go", got, 0); err != nil {
		t.Fatalf("stats.go does not parse after the reply: %v\n%s", err, got)
	}
	if strings.Count(got, "func Median(") != 1 || !strings.Contains(got, "return (s[mid-1] + s[mid]) / 2.0") {
		t.Errorf("stats.go lacks the reply's Median:\n%s", got)
	}
	if !strings.Contains(got, "return sum / float64(len(xs))\n}\n\n// Median") {
		t.Errorf("Mean changed:\n%s", got)
	}
	if c := rep.Roles[1]; !strings.HasPrefix(c.Summary, "(The host applied the code of this answer to stats.go") {
		t.Errorf("coder summary %q does not say the host applied the code", c.Summary)
	}
}

// readTestdata returns the text of testdata/name.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
