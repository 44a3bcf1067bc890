package agent

import (
	"context"
	"strings"

	"flow/runtime/check"
	"flow/runtime/config"
	"flow/runtime/diff"
	"flow/runtime/progress"
	"flow/runtime/verify"
	"flow/runtime/verify/weakening"
)

// requiredChecks are the names of the configured required checks.
func requiredChecks(cfg *config.Config) []string {
	var out []string
	for _, c := range cfg.Checks {
		if c.Required {
			out = append(out, c.Name)
		}
	}
	return out
}

// measureBaseline runs the required checks once before the coder's first
// edit (trusted runs with checks, unless agent.baseline = false), so that
// the report can say which failures the run fixed, broke or found.
func (r *run) measureBaseline(ctx context.Context) {
	g := r.guard
	if g == nil || g.measured {
		return
	}
	g.measured = true
	names := requiredChecks(r.cfg)
	if !r.cfg.Trusted || !r.cfg.Agent.Baseline || r.checks == nil || len(names) == 0 {
		return
	}
	r.setPhase(progress.PhaseBaseline)
	g.baseline = verify.MeasureBaseline(ctx, r.checks, names)
	r.baseline = g.baseline
}

// verifyGuard is the gate's guard for this run.
func (r *run) verifyGuard() *verify.Guard {
	if r.guard == nil {
		return nil
	}
	cfg := r.cfg
	return &verify.Guard{
		Classifier:          classifier(cfg),
		Originals:           r.guard.originals,
		Baseline:            r.guard.baseline,
		AllowTestEdits:      cfg.Verify.AllowTestEdits,
		RequireFailingFirst: cfg.Verify.RequireFailingFirst,
		BehaviourPreserving: cfg.Verify.BehaviourPreserving,
		Root:                cfg.Workspace,
		TestChecks:          testChecks(cfg),
	}
}

// testChecks returns the runner of the fail-then-pass evidence: the
// required checks of kind "test" (all required checks when none is of that
// kind), each treated as required, in the scratch copy dir.
func testChecks(cfg *config.Config) func(dir string) verify.CheckRunner {
	var tests, required []config.Check
	for _, c := range cfg.Checks {
		if !c.Required {
			continue
		}
		required = append(required, c)
		if c.Kind == config.KindTest {
			tests = append(tests, c)
		}
	}
	if len(tests) == 0 {
		tests = required
	}
	if len(tests) == 0 {
		return nil
	}
	return func(dir string) verify.CheckRunner {
		return &check.Runner{Root: dir, Trusted: cfg.Trusted, Checks: tests}
	}
}

// changeSummary is one test or check-configuration file's change as the
// reviewer sees it: the unified diff and what the host found weakened.
type changeSummary struct {
	Path      string   `json:"path"`
	Kind      string   `json:"kind"`
	Change    string   `json:"change"`
	Diff      string   `json:"diff"`
	Truncated bool     `json:"truncated,omitempty"`
	Weakening []string `json:"weakening,omitempty"`
}

// changeList is the test and check changes as the reviewer reads them: a
// diff inside a JSON string is one line of \n escapes (texter).
type changeList []changeSummary

// promptText is each file's path, kind and change, what weakening the host
// found in it, and its diff in a fence.
func (l changeList) promptText() string {
	var b strings.Builder
	for _, c := range l {
		b.WriteString(c.Path + " (" + c.Kind + ", " + c.Change + "): ")
		if len(c.Weakening) == 0 {
			b.WriteString("the host found no weakening.")
		} else {
			b.WriteString("the host found it weakened: " + strings.Join(c.Weakening, "; ") + ".")
		}
		switch {
		case strings.HasPrefix(c.Diff, "("):
			b.WriteString(" " + c.Diff + "\n")
		case c.Diff != "":
			b.WriteString(" Its diff:\n" + fenced(strings.TrimRight(c.Diff, "\n")))
		default:
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Bounds of the test and check changes shown to the reviewer: each diff,
// all diffs together (the reviewer's whole context must stay within
// max_context_chars), and the files listed.
const (
	maxGuardDiff  = 4000
	maxGuardTotal = 12000
	maxGuardFiles = 20
)

// guardChanges lists the diff of every changed test and check
// configuration file, with the weakening detected in it: what the reviewer
// must judge separately from the production change. Diffs are cut to stay
// within maxGuardTotal characters; the findings are always listed.
func guardChanges(edits []verify.Edit) []changeSummary {
	var out []changeSummary
	left := maxGuardTotal
	for _, e := range edits {
		if e.Kind == weakening.KindSource {
			continue
		}
		if len(out) == maxGuardFiles {
			break
		}
		s := changeSummary{Path: e.Path, Kind: string(e.Kind)}
		switch {
		case !e.Known:
			s.Change, s.Diff = "modified", "(the content before the run is unknown)"
		case left < 200:
			d := diff.File(e.Path, e.Before, e.After, e.Existed, e.Exists, 1)
			s.Change, s.Diff, s.Truncated = d.Change, "(diff omitted to stay within the context budget; read the file)", true
		default:
			d := diff.File(e.Path, e.Before, e.After, e.Existed, e.Exists, min(maxGuardDiff, left))
			s.Change, s.Diff, s.Truncated = d.Change, d.Diff, d.Truncated
			left -= len(d.Diff)
		}
		for _, f := range e.Findings {
			s.Weakening = append(s.Weakening, f.Detail)
		}
		out = append(out, s)
	}
	return out
}
