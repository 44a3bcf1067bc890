package agent

import (
	"strconv"
	"strings"

	"flow/internal/text"
	"flow/runtime/report"
)

// limits bound the parts of a failure summary; fit tries them from the most
// to the least generous until the summary fits its character budget.
type limits struct {
	tail       int // characters of each output tail
	checks     int // failing checks listed
	gaps       int // coverage gaps listed
	issues     int // reviewer issues listed
	issueChars int // characters of each issue and of the reviewer summary
	text       int // characters of paths, reasons and error strings
}

var levels = []limits{
	{tail: 1500, checks: 6, gaps: 20, issues: 10, issueChars: 400, text: 300},
	{tail: 800, checks: 4, gaps: 10, issues: 8, issueChars: 250, text: 200},
	{tail: 400, checks: 3, gaps: 6, issues: 5, issueChars: 150, text: 120},
	{tail: 150, checks: 2, gaps: 4, issues: 3, issueChars: 100, text: 80},
	{tail: 0, checks: 1, gaps: 2, issues: 2, issueChars: 80, text: 60},
}

// checkSummary is a failing check as the model sees it.
type checkSummary struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Required   bool   `json:"required"`
	Kind       string `json:"kind,omitempty"`
	Returncode *int   `json:"returncode,omitempty"`
	Error      string `json:"error,omitempty"`
	StdoutTail string `json:"stdout_tail,omitempty"`
	StderrTail string `json:"stderr_tail,omitempty"`
}

// coverageSummary is one coverage item as the model sees it.
type coverageSummary struct {
	Path     string   `json:"path"`
	Language string   `json:"language"`
	Status   string   `json:"status,omitempty"`
	Checks   []string `json:"checks,omitempty"`
}

// verificationSummary is a bounded view of a verification object: never
// the whole object, whose check outputs alone can exceed a context budget.
type verificationSummary struct {
	Status        string            `json:"status"`
	Verified      bool              `json:"verified"`
	Reason        string            `json:"reason,omitempty"`
	PassedChecks  []string          `json:"passed_checks,omitempty"`
	FailingChecks []checkSummary    `json:"failing_checks,omitempty"`
	CoverageGaps  []coverageSummary `json:"coverage_gaps,omitempty"`
	Covered       []coverageSummary `json:"covered,omitempty"`
	Omitted       string            `json:"omitted,omitempty"`
}

// roleSummary is a bounded view of a role's state.
type roleSummary struct {
	Status   string   `json:"status"`
	Approved *bool    `json:"approved,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	Issues   []string `json:"issues,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// repairSummary is what a repair cycle's coder learns about the last cycle.
type repairSummary struct {
	Instruction  string              `json:"instruction"`
	Verification verificationSummary `json:"verification"`
	Review       *roleSummary        `json:"review,omitempty"`
	Previous     roleSummary         `json:"previous_implementation"`
}

// repairContext is the coder's context in a repair cycle for task: the plan, a
// bounded summary of what failed (at most maxRepairChars characters of
// JSON; its text, repairSummary.promptText, is shorter) and what to do
// now, which the message ends with (doc/design.md §6.9).
// whole: the coder answers in the whole-file format. tests: the test
// files a test that shows the change belongs in, for a cycle without
// evidence (none: the project's test files).
func repairContext(task, plan string, o cycleOutcome, whole bool, tests []string) map[string]any {
	instruction, now := repairInstruction, nowRepair
	switch {
	case len(o.changed) == 0 && whole:
		instruction, now = repairNoChangeWhole, nowWithTask(nowNoChange, task)
	case len(o.changed) == 0:
		instruction, now = repairNoChange, nowWithTask(nowNoChange, task)
	case o.verification.NoEvidence:
		instruction, now = evidenceInstruction(tests)
	}
	summary := fit(maxRepairChars, func(l limits) any {
		s := repairSummary{
			Instruction:  instruction,
			Verification: summariseVerification(o.verification, l, false),
			// The last coder's account is left out: the changed files'
			// current text and the checks' output say what it did, and
			// a 1.5B coder told its own "the checks pass" answered that
			// the task was already done (doc/design.md §6.9).
			Previous: roleSummary{Status: o.coder.Status, Error: text.Truncate(o.coder.Error, l.text)},
		}
		if o.reviewer.ran() && o.reviewer.Status != report.StatusSkipped {
			s.Review = reviewSummary(o.reviewer.Role, l)
		}
		return s
	}, func() any {
		return repairSummary{
			Instruction: instruction,
			Verification: verificationSummary{
				Status: o.verification.Status, Reason: text.Truncate(o.verification.Reason, 200),
				Omitted: "details omitted to stay within the context budget",
			},
			Previous: roleSummary{Status: o.coder.Status},
		}
	})
	return map[string]any{"plan": plan, "repair": summary, nowKey: now}
}

// nowKey is the role context's entry that the user message ends with,
// after the role's instructions: what to do now (nowWithTask, the repair's).
const nowKey = "now"

// What a repair cycle's coder is told to do now, at the end of its
// message: a 1.5B coder asked in the middle of its message for a test
// answered with the file it was shown last.
const (
	nowRepair   = "fix what failed in the last cycle, as listed above."
	nowNoChange = "make the change this task asks for:"
	nowCoder    = "do this task:"
	nowReviewer = "judge whether the change in the diffs above does this task:"
)

// maxNowTask bounds the task a "Now:" line repeats.
const maxNowTask = 600

// nowWithTask is a "Now:" line that ends with the task itself, on a line
// of its own (doc/design.md §6.9): the task opens every role's message,
// thousands of tokens before the role answers, and the 1.5B coder and
// reviewer answered as if they had not read it (an unchanged file "with
// the fix"; a verdict that turned the task around). A task longer than
// maxNowTask, or one with a code block, is referred to instead.
func nowWithTask(now, task string) string {
	task = strings.TrimSpace(task)
	if task == "" || len(task) > maxNowTask || strings.Contains(task, "```") {
		return strings.TrimSuffix(now, ":") + " at the top of this message."
	}
	return now + "\n" + task
}

// evidenceInstruction is the repair instruction, and what to do now, of a
// cycle whose checks do not show the change: add a test to tests (the test
// files that go with the changed files), or to the project's test files.
func evidenceInstruction(tests []string) (string, string) {
	now := func(where string) string {
		return "add or extend a test " + where + "that fails on the code as it was before your change and passes now; keep your change."
	}
	if len(tests) == 0 {
		return repairEvidence, now("")
	}
	where := "in " + joinWords(tests)
	return strings.Replace(repairEvidence, evidenceWhere, where, 1), now(where + " ")
}

// fit returns the first build result, from the most generous limits to the
// least, whose JSON text is at most max characters, else fallback().
func fit(max int, build func(limits) any, fallback func() any) any {
	for _, l := range levels {
		v := build(l)
		if jsonChars(v) <= max {
			return v
		}
	}
	return fallback()
}

// summariseVerification builds the bounded view of v. withCovered adds the
// covered files (for the reviewer).
func summariseVerification(v report.Verification, l limits, withCovered bool) verificationSummary {
	s := verificationSummary{Status: v.Status, Verified: v.Verified, Reason: text.Truncate(v.Reason, l.text)}
	var failing []report.CheckResult
	for _, c := range v.Checks {
		if c.Status == report.StatusOK {
			if len(s.PassedChecks) < 16 {
				s.PassedChecks = append(s.PassedChecks, text.Truncate(c.Name, 64))
			}
			continue
		}
		failing = append(failing, c)
	}
	// Required failures first: they are what blocks verification.
	ordered := make([]report.CheckResult, 0, len(failing))
	for _, req := range []bool{true, false} {
		for _, c := range failing {
			if c.Required == req {
				ordered = append(ordered, c)
			}
		}
	}
	omitted := 0
	for _, c := range ordered {
		if len(s.FailingChecks) == l.checks {
			omitted++
			continue
		}
		s.FailingChecks = append(s.FailingChecks, summariseCheck(c, l))
	}
	for _, c := range v.Coverage {
		item := coverageSummary{Path: text.Truncate(c.Path, l.text), Language: text.Truncate(c.Language, 40)}
		if c.Status != report.StatusOK {
			if len(s.CoverageGaps) == l.gaps {
				omitted++
				continue
			}
			s.CoverageGaps = append(s.CoverageGaps, item)
		} else if withCovered {
			if len(s.Covered) == l.gaps {
				omitted++
				continue
			}
			item.Checks = c.Checks
			s.Covered = append(s.Covered, item)
		}
	}
	if omitted > 0 {
		s.Omitted = strconv.Itoa(omitted) + " more items omitted"
	}
	return s
}

// summariseCheck bounds one failing check, splitting the tail budget
// between stdout and stderr when both have output.
func summariseCheck(c report.CheckResult, l limits) checkSummary {
	out, errOut := strings.TrimSpace(c.Stdout), strings.TrimSpace(c.Stderr)
	nOut, nErr := l.tail, l.tail
	if out != "" && errOut != "" {
		nOut, nErr = l.tail/2, l.tail-l.tail/2
	}
	return checkSummary{
		Name: text.Truncate(c.Name, 64), Status: c.Status, Required: c.Required, Kind: c.Kind,
		Returncode: c.Returncode, Error: text.Truncate(c.Error, l.text),
		StdoutTail: text.Tail(out, nOut), StderrTail: text.Tail(errOut, nErr),
	}
}

// reviewSummary bounds the reviewer's verdict or failure.
func reviewSummary(rv report.Role, l limits) *roleSummary {
	s := &roleSummary{
		Status: rv.Status, Approved: rv.Approved,
		Summary: text.Truncate(rv.Summary, l.issueChars), Error: text.Truncate(rv.Error, l.text),
	}
	for i, is := range rv.Issues {
		if i == l.issues {
			s.Issues = append(s.Issues, strconv.Itoa(len(rv.Issues)-i)+" more issues omitted")
			break
		}
		s.Issues = append(s.Issues, text.Truncate(is, l.issueChars))
	}
	return s
}
