package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/report"
	"flow/runtime/scratch"
	"flow/runtime/verify/weakening"
)

// Guard keeps a model from gaming "verified": it compares each changed
// file with what it held before the run, refuses edits that weaken the
// checks (removed or skipped tests, changed expected values, loosened check
// configuration), compares the checks with their baseline, and, when the
// operator asks for it, takes fail-then-pass evidence on a scratch copy.
// A nil *Guard guards nothing.
type Guard struct {
	// Classifier tells test files and check definitions from source.
	Classifier weakening.Classifier
	// Originals knows each changed file's pre-run content. A changed file
	// it does not know is compared with nothing (it cannot be judged).
	Originals *Originals
	// Baseline are the required checks' results before the coder's first
	// edit; nil when no baseline was measured.
	Baseline []report.CheckResult
	// AllowTestEdits accepts weakening edits of test files when the
	// fail-then-pass evidence shows the changed tests fail on the old code.
	AllowTestEdits bool
	// RequireFailingFirst verifies a run that added or changed tests only
	// with fail-then-pass evidence.
	RequireFailingFirst bool
	// BehaviourPreserving verifies without a check that shows the change:
	// the task changes no behaviour, and nothing that passed fails.
	BehaviourPreserving bool
	// Root is the workspace root the scratch copy is made of.
	Root string
	// TestChecks returns the runner of the test checks in dir (a scratch
	// copy); each of its checks counts as required. nil means no evidence
	// can be taken: a run that needs it is unverified.
	TestChecks func(dir string) CheckRunner
}

// Edit is one changed file as the guard saw it.
type Edit struct {
	Path            string
	Kind            weakening.Kind
	Before, After   []byte
	Existed, Exists bool
	// Known is false when the file's pre-run content is unknown.
	Known    bool
	Findings []weakening.Finding
}

// Reasons of the guard.
const (
	// reasonWeakenedTail follows the finding's own sentence.
	reasonWeakenedTail = "; an edit that weakens the checks cannot be verified: fix the code instead of the test"
	reasonAllowHint    = " (or let the operator allow test edits with [verify] allow_test_edits)"
)

// edits reads the current content of every changed file and compares it
// with its original.
func (g *Guard) edits(ctx context.Context, fsys bufferfs.FS, changed []string) []Edit {
	out := make([]Edit, 0, len(changed))
	for _, p := range changed {
		e := Edit{Path: p, Kind: g.Classifier.Classify(p)}
		if orig, ok := g.Originals.Original(p); ok {
			e.Known, e.Existed, e.Before = true, orig.Exists, orig.Data
		}
		if f, err := fsys.Read(ctx, p, 0); err == nil {
			e.Exists, e.After = true, f.Data
		} else if info, serr := fsys.Stat(ctx, p); serr == nil && info.Exists {
			// It exists but cannot be read (too large): judge it changed
			// without content rather than pretend it was deleted.
			e.Exists, e.Known = true, false
		}
		if e.Known {
			e.Findings = g.Classifier.Detect(weakening.Change{
				Path: p, Before: e.Before, After: e.After, Existed: e.Existed, Exists: e.Exists,
			})
		}
		out = append(out, e)
	}
	return out
}

// apply judges the edits into v, which Decide made; it may turn a verified
// v into an unverified one and say why. The rules run in order: a
// comment-only change, then weakening, then evidence (§8.6, §8.7).
func (g *Guard) apply(ctx context.Context, v *report.Verification, edits []Edit) {
	applyBaseline(v, g.Baseline)
	t := tallyEdits(edits)
	for _, f := range t.findings {
		v.Weakening = append(v.Weakening, report.Weakening{Path: f.Path, What: f.What, Name: f.Name, Line: f.Line, Detail: f.Detail})
	}
	if !v.Verified {
		// A failing or stale verification keeps its own reason; the
		// weakening stays listed for the reviewer and the report.
		return
	}
	if same := commentOnly(edits); len(same) > 0 {
		unverify(v, commentOnlyReason(same))
		return
	}
	excusable := g.AllowTestEdits && t.testFindings > 0 && t.configFindings == 0
	if len(t.findings) > 0 && !excusable {
		unverify(v, weakenedReason(t.findings, g.AllowTestEdits || t.configFindings > 0))
		return
	}
	g.applyEvidence(ctx, v, edits, t, excusable)
}

// editTally is what the guard's rules need to know of the edits.
type editTally struct {
	findings []weakening.Finding
	// testFindings and configFindings count the findings in test files and
	// in the other files (check definitions).
	testFindings, configFindings int
	// tests are the changed test files that exist after the run.
	tests []string
}

func tallyEdits(edits []Edit) editTally {
	var t editTally
	for _, e := range edits {
		for _, f := range e.Findings {
			t.findings = append(t.findings, f)
			if e.Kind == weakening.KindTest {
				t.testFindings++
			} else {
				t.configFindings++
			}
		}
		if e.Kind == weakening.KindTest && e.Exists {
			t.tests = append(t.tests, e.Path)
		}
	}
	return t
}

// applyEvidence asks a check that shows the change of v, which passed
// every other rule: a fixed check, fail-then-pass evidence, or a task
// declared behaviour preserving. excusable says the weakening findings
// (all in tests) are excused if the fail-then-pass evidence holds.
func (g *Guard) applyEvidence(ctx context.Context, v *report.Verification, edits []Edit, t editTally, excusable bool) {
	needFailFirst := g.RequireFailingFirst && len(t.tests) > 0
	fixed := fixedChecks(v.Checks)
	var ff *report.FailFirst
	// Fail-then-pass evidence is taken when the operator requires it, when
	// it excuses a test edit, and when nothing else can show the change.
	if needFailFirst || excusable || (len(fixed) == 0 && !g.BehaviourPreserving && len(t.tests) > 0) {
		ff = g.failFirst(ctx, edits, t.tests)
		v.FailFirst = ff
	}
	if (needFailFirst || excusable) && ff.Status != report.FailFirstFailedBefore {
		if len(t.findings) > 0 {
			unverify(v, weakening.Sentence(t.findings)+"; test edits are allowed only when the changed tests fail on the code as it was before the run, and "+text.LowerFirst(ff.Reason))
		} else {
			unverify(v, ff.Reason)
		}
		return
	}
	if len(t.findings) > 0 {
		for i := range v.Weakening {
			v.Weakening[i].Excused = true
		}
	}
	switch {
	case len(fixed) > 0:
		v.Evidence = report.EvidenceFixed
	case ff != nil && ff.Status == report.FailFirstFailedBefore:
		v.Evidence = report.EvidenceFailThenPass
	case g.BehaviourPreserving:
		v.Evidence = report.EvidenceBehaviourPreserving
	default:
		unverify(v, g.noEvidenceReason(ff))
		v.NoEvidence = true
	}
}

// fixedChecks names the required checks that failed in the baseline and
// pass now.
func fixedChecks(checks []report.CheckResult) []string {
	var out []string
	for _, c := range checks {
		if c.Required && c.Baseline == report.BaselineFixed {
			out = append(out, c.Name)
		}
	}
	return out
}

// Reasons of a verification whose checks all pass but show nothing.
const (
	// ReasonNoEvidence opens the reason of a run no check shows.
	ReasonNoEvidence = "No check shows the change"
	// reasonEvidenceHow says how to get evidence.
	reasonEvidenceHow = "add a test that fails without the change and passes with it " +
		"(for a change that should alter no behaviour, set [verify] behaviour_preserving = true or run with --behaviour-preserving)"
)

// noEvidenceReason says why no check shows the change, given the
// fail-then-pass evidence (nil when the run changed no test).
func (g *Guard) noEvidenceReason(ff *report.FailFirst) string {
	var why string
	switch {
	case ff != nil && ff.Status == report.FailFirstPassedBefore && len(ff.Restored) == 0:
		why = "the run changed only tests (" + strings.Join(ff.Tests, ", ") + ") and no code"
	case ff != nil && ff.Status == report.FailFirstPassedBefore:
		why = "the run's new or changed tests (" + strings.Join(ff.Tests, ", ") + ") also pass on the code as it was before the run"
	case ff != nil:
		why = text.LowerFirst(strings.TrimSuffix(ff.Reason, "."))
	case g.Baseline == nil:
		why = "no baseline of the checks was measured before the run (agent.baseline = false), so none can show it was failing, and the run added or changed no test"
	default:
		why = "the required checks passed before this run and pass now, and the run added or changed no test"
	}
	return ReasonNoEvidence + ": " + why + "; " + reasonEvidenceHow
}

func weakenedReason(findings []weakening.Finding, allowed bool) string {
	s := weakening.Sentence(findings) + reasonWeakenedTail
	if !allowed {
		s += reasonAllowHint
	}
	return s
}

// commentOnly returns the changed files when every one of them is an
// existing source file whose code the run left as it was (only comments,
// blank lines or whitespace changed: weakening.SameCode); nil otherwise. The
// checks then ran the code they ran before the run, so their passing says
// nothing about the task. In the evaluation a 1.5B model put the function
// it was asked for inside a doc comment, and the checks and the reviewer
// passed it.
func commentOnly(edits []Edit) []string {
	var paths []string
	for _, e := range edits {
		if !e.Known || !e.Existed || !e.Exists || !weakening.SameCode(e.Path, e.Before, e.After) {
			return nil
		}
		paths = append(paths, e.Path)
	}
	return paths
}

// commentOnlyReason is the reason of a run whose change is commentOnly.
func commentOnlyReason(paths []string) string {
	list := strings.Join(paths[:min(len(paths), 3)], ", ")
	if len(paths) > 3 {
		list += fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return "The change to " + list + " only touches comments, blank lines or whitespace, so the code the checks ran is the code they ran before: " +
		"make the change in the code itself (if the task is about comments, review it yourself)"
}

func unverify(v *report.Verification, reason string) {
	v.Verified = false
	v.Status = report.StatusUnverified
	v.Reason = reason
}

// failFirst runs the test checks on a scratch copy of the workspace whose
// files other than tests are put back to their pre-run content: the new
// tests against the old code. They must fail there (they pass on the new
// code: the verification already ran them).
func (g *Guard) failFirst(ctx context.Context, edits []Edit, tests []string) *report.FailFirst {
	ff := &report.FailFirst{Status: report.FailFirstError, Tests: tests, Restored: []string{}, Checks: []report.CheckResult{}}
	var restore []Edit
	for _, e := range edits {
		if e.Kind == weakening.KindTest {
			continue
		}
		if !e.Known {
			ff.Reason = fmt.Sprintf("Fail-then-pass evidence cannot be taken: the content of %s before the run is unknown", e.Path)
			return ff
		}
		restore = append(restore, e)
	}
	testList := strings.Join(tests, ", ")
	if len(restore) == 0 {
		ff.Status = report.FailFirstPassedBefore
		ff.Reason = fmt.Sprintf("The run changed only tests (%s) and no code, so nothing shows that the tests catch a real defect ([verify] require_failing_first)", testList)
		return ff
	}
	if g.TestChecks == nil || g.Root == "" {
		ff.Reason = "Fail-then-pass evidence cannot be taken: no test check can run on a scratch copy"
		return ff
	}
	c, err := scratch.New(ctx, g.Root, scratch.Options{})
	if err != nil {
		ff.Reason = fmt.Sprintf("Fail-then-pass evidence cannot be taken: %v", err)
		return ff
	}
	defer c.Close()
	for _, e := range restore {
		if err := c.Set(ctx, e.Path, e.Before, e.Existed); err != nil {
			ff.Reason = fmt.Sprintf("Fail-then-pass evidence cannot be taken: restoring %s in the scratch copy: %v", e.Path, err)
			return ff
		}
		ff.Restored = append(ff.Restored, e.Path)
	}
	rep := g.TestChecks(c.Dir).Run(ctx, "")
	ff.Checks = slices.Clone(rep.Checks)
	var failed, other []string
	for _, r := range rep.Checks {
		switch r.Status {
		case report.StatusOK:
		case report.StatusFailed:
			failed = append(failed, r.Name)
		default:
			other = append(other, r.Name+" "+r.Status)
		}
	}
	switch {
	case len(rep.Checks) == 0:
		ff.Reason = "Fail-then-pass evidence cannot be taken: no check of kind \"test\" is configured"
	case len(failed) > 0:
		ff.Status = report.FailFirstFailedBefore
		ff.Reason = fmt.Sprintf("The tests fail on the code as it was before the run (%s failed) and pass on the new code", strings.Join(failed, ", "))
	case len(other) > 0:
		ff.Reason = fmt.Sprintf("Fail-then-pass evidence is inconclusive: on the code as it was before the run %s", strings.Join(other, ", "))
	default:
		ff.Status = report.FailFirstPassedBefore
		ff.Reason = fmt.Sprintf("The new or changed tests (%s) also pass on the code as it was before the run, so they do not show that the change fixes anything ([verify] require_failing_first)", testList)
	}
	return ff
}
