package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/codeblock"
)

func TestParseReviewCase(t *testing.T) {
	good := "label: wrong\nwhy: handles only the even case the test uses\n-- stats.go --\npackage stats\n-- sub/new_test.go --\npackage sub\n\n"
	c, err := ParseReviewCase(good)
	if err != nil || c.Label != "wrong" || c.Why != "handles only the even case the test uses" || len(c.Files) != 2 ||
		c.Files[0] != (CaseFile{Path: "stats.go", Text: "package stats\n"}) || c.Files[1] != (CaseFile{Path: "sub/new_test.go", Text: "package sub\n\n"}) {
		t.Fatalf("ParseReviewCase = %+v, %v", c, err)
	}
	if a := c.answer(); a != "stats.go\n```\npackage stats\n```\n\nsub/new_test.go\n```\npackage sub\n\n```\n\n" {
		t.Errorf("answer = %q", a)
	}
	for name, bad := range map[string]string{
		"no label":       "why: x\n-- a.go --\nx\n",
		"unknown label":  "label: maybe\nwhy: x\n-- a.go --\nx\n",
		"no why":         "label: correct\n-- a.go --\nx\n",
		"no file":        "label: correct\nwhy: x\n",
		"outside":        "label: correct\nwhy: x\n-- ../a.go --\nx\n",
		"unknown header": "label: correct\nwhy: x\nnote: y\n-- a.go --\nx\n",
	} {
		if _, err := ParseReviewCase(bad); err == nil {
			t.Errorf("%s: ParseReviewCase succeeded, want an error", name)
		}
	}
	// A file holding a fence gets a longer one.
	c = ReviewCase{Files: []CaseFile{{Path: "README.md", Text: "```go\nx\n```\n"}}}
	if a := c.answer(); !strings.HasPrefix(a, "README.md\n````\n") {
		t.Errorf("answer = %q, want a four-backtick fence", a)
	}
}

func TestSummarizeReviews(t *testing.T) {
	rs := []ReviewResult{
		{Label: "wrong", Judged: true, Verdict: "rejected", WallMS: 10},
		{Label: "wrong", Judged: true, Verdict: "approved", WallMS: 30},
		{Label: "wrong", Judged: true, Verdict: "none", WallMS: 20},
		{Label: "correct", Judged: true, Verdict: "approved", WallMS: 40},
		{Label: "correct", NotJudged: "checks failed"},
	}
	s := SummarizeReviews(rs)
	want := ReviewSummary{Cases: 5, NotJudged: 1, Wrong: 3, WrongRejected: 1, Correct: 1, CorrectApprove: 1, NoVerdict: 1,
		TrustPct: 100.0 / 3, ApprovalPct: 100, MedianMS: 25}
	if s != want {
		t.Errorf("SummarizeReviews = %+v, want %+v", s, want)
	}
}

// TestReviewerMode runs the harness's -reviewer mode on three cases of
// go-stats-median against the scripted server: the coder's change is the
// case's, the real checks run, and only the reviewer's calls reach the
// server, whose verdicts make the figures. A case whose change fails the
// checks is not judged and asks the server nothing.
func TestReviewerMode(t *testing.T) {
	needTools(t, "go")
	src, err := os.ReadFile(filepath.Join(tasksDir, "go-stats-median", "project", "stats.go"))
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(src), "\treturn s[len(s)/2]\n}", "\tif len(s)%2 == 0 {\n\t\treturn (s[len(s)/2-1] + s[len(s)/2]) / 2\n\t}\n\treturn s[len(s)/2]\n}", 1)
	hard := strings.Replace(string(src), "\treturn s[len(s)/2]\n}", "\tif len(s) == 4 {\n\t\treturn 2.5\n\t}\n\treturn s[len(s)/2]\n}", 1)
	cases := filepath.Join(t.TempDir(), "cases")
	for name, body := range map[string]string{
		"a-correct.txtar": "label: correct\nwhy: averages the two middle values\n-- stats.go --\n" + fixed,
		"b-wrong.txtar":   "label: wrong\nwhy: hard-codes the tested answer\n-- stats.go --\n" + hard,
		"c-broken.txtar":  "label: wrong\nwhy: does not compile\n-- stats.go --\npackage stats\n\nfunc Median( {\n",
	} {
		writeCase(t, filepath.Join(cases, "go-stats-median", name), body)
	}
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: `{"approved": true, "summary": "averages the middle values", "issues": []}`, PromptTokens: 900},
		ollamatest.Turn{Content: `{"approved": true, "summary": "fine", "issues": []}`, PromptTokens: 950},
	)
	// A small model: as in a run, "auto" declares the tools as text.
	srv.SetModels("flow-eval-scripted")
	srv.SetParameterSize("flow-eval-scripted", "1.5B")
	srv.SetCapabilities("flow-eval-scripted", "completion", "tools")
	out := filepath.Join(t.TempDir(), "reviewer.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-reviewer", "-cases", cases, "-tasks-dir", tasksDir, "-tools-dir", toolsDir,
		"-base-url", srv.URL, "-model", "flow-eval-scripted", "-out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("harness -reviewer exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var f ReviewFile
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &f) != nil {
		t.Fatalf("read %s: %v", out, err)
	}
	if len(f.Results) != 3 || !f.Finished {
		t.Fatalf("results %+v, finished %t", f.Results, f.Finished)
	}
	got := map[string]string{}
	for _, r := range f.Results {
		got[r.Case] = r.Verdict
		if !r.Judged {
			got[r.Case] = "not judged"
		}
	}
	if got["a-correct"] != "approved" || got["b-wrong"] != "approved" || got["c-broken"] != "not judged" {
		t.Errorf("verdicts %v, want approved, approved, not judged\n%s", got, stderr.String())
	}
	want := ReviewSummary{Cases: 3, NotJudged: 1, Wrong: 1, WrongRejected: 0, Correct: 1, CorrectApprove: 1, TrustPct: 0, ApprovalPct: 100}
	if s := f.Summary; s.Cases != want.Cases || s.NotJudged != 1 || s.Wrong != 1 || s.WrongRejected != 0 || s.Correct != 1 || s.CorrectApprove != 1 || s.TrustPct != 0 || s.ApprovalPct != 100 {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	chats := 0
	for _, r := range srv.Requests() {
		if r.Path == "/api/chat" {
			chats++
			if r.Format() == nil || !strings.Contains(string(r.Raw), "Your role now: the reviewer") {
				t.Errorf("a chat request that is not a structured review reached the server: %.300s", r.Raw)
			}
			if _, has := r.Body["tools"]; has {
				t.Errorf("a review of a 1.5B model declared its tools natively, unlike a run's: %.300s", r.Raw)
			}
		}
	}
	if chats != 2 || srv.Pending() != 0 {
		t.Errorf("%d chat requests, %d turns left; want the two judged cases' reviews only", chats, srv.Pending())
	}
	for _, want := range []string{"wrong changes rejected (trust): 0/1 0%", "correct changes approved: 1/1 100%", "not judged 1", "hard-codes"} {
		if !strings.Contains(stdout.String()+stderr.String(), want) && want != "hard-codes" {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func writeCase(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReviewerCases checks every labelled case of make eval-reviewer
// against its task: at least 40, half of each label; with the case's files
// laid over the project every check of the task passes (the reviewer is
// the only judge left), and the hidden acceptance test passes for a
// correct change and fails for a wrong one. A label this test refutes
// would make the evaluation's figures lie.
func TestReviewerCases(t *testing.T) {
	cases, err := LoadReviewCases("../reviewer/cases", nil)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range cases {
		count[c.Label]++
	}
	if len(cases) < 40 || count[labelCorrect] != count[labelWrong] {
		t.Errorf("%d cases, %d correct and %d wrong; want at least 40, half of each", len(cases), count[labelCorrect], count[labelWrong])
	}
	o := &Options{TasksDir: tasksDir, ToolsDir: toolsDir, BaseURL: "http://127.0.0.1:1", Model: "m", API: "native", ContextLength: 16384, CallTimeout: 60}
	if err := absPaths(o); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Task+"/"+c.Name, func(t *testing.T) {
			t.Parallel()
			task, err := LoadTask(filepath.Join(o.TasksDir, c.Task))
			if err != nil {
				t.Fatal(err)
			}
			if !task.CanBeDone() {
				t.Fatalf("task %s cannot be done: no correct change exists", c.Task)
			}
			needTools(t, task.Language)
			dir := t.TempDir()
			ws := filepath.Join(dir, "workspace")
			if err := prepareWorkspace(task, ws, o.ToolsDir); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.Files {
				writeCase(t, filepath.Join(ws, f.Path), f.Text)
			}
			env := runEnv(toolPath(o.ToolsDir), dir)
			checks, err := taskChecks(o, task, dir, ws)
			if err != nil {
				t.Fatal(err)
			}
			outcomes, err := runChecks(t.Context(), checks, ws, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, oc := range outcomes {
				if !oc.Passed {
					t.Errorf("check %s fails on the case's change; the reviewer would never see it:\n%s", oc.Name, oc.Output)
				}
			}
			passed, out, err := runAcceptance(t.Context(), task, ws, filepath.Join(dir, "accept"), env)
			if err != nil {
				t.Fatalf("acceptance: %v\n%s", err, out)
			}
			if passed != (c.Label == labelCorrect) {
				t.Errorf("labelled %s (%s), but the acceptance test passed = %t:\n%s", c.Label, c.Why, passed, out)
			}
		})
	}
}

// TestReviewerCasesReadWhole: every case's answer, as the scripted coder
// gives it, is read back whole by flow's whole-file format: its files,
// nothing taken for left-out code.
func TestReviewerCasesReadWhole(t *testing.T) {
	cases, err := LoadReviewCases("../reviewer/cases", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := codeblock.WholeFiles(c.answer(), func(string) (string, bool) { return "", false })
		if len(got) != len(c.Files) {
			t.Errorf("%s/%s: %d files read back, want %d", c.Task, c.Name, len(got), len(c.Files))
			continue
		}
		for i, w := range got {
			if w.Path != c.Files[i].Path || w.Text != c.Files[i].Text || w.Elided != "" {
				t.Errorf("%s/%s: file %s read back as %s (elided %q)", c.Task, c.Name, c.Files[i].Path, w.Path, w.Elided)
			}
		}
	}
}
