package agent

import (
	"slices"
	"time"

	"flow/internal/text"
	"flow/runtime/config"
	"flow/runtime/repomap"
	"flow/runtime/report"
	"flow/runtime/tools"
	"flow/runtime/verify"
)

// run is the state of one run: what its role invocations share (env), and
// what only the run itself keeps (the plan, the cycles' outcomes, the
// conclusion). The report is not kept while the run goes on: run.report
// assembles it once, at the end, from this state and the recorder's.
type run struct {
	*env
	checks  tools.CheckRunner // nil when no checks can run
	started time.Time
	plan    string // the planner's final answer

	// planner is the planner's outcome, for the verification gate.
	planner report.Role
	// guard holds the pre-run contents and the baseline (guard.go).
	guard *runGuard

	roles   []report.Role
	current *session             // the role invocation under way, if any
	checked []report.CheckResult // the last cycle's checks
	history []report.Verification
	// baseline is the required checks' results before the first edit.
	baseline []report.CheckResult
	// shared is the part every role's message starts with, made once.
	shared *sharedPart
	// listing is the brief for a whole-file coder (fileListing).
	listing *string
	// rejected are the changes the reviewer rejected (cycle.go).
	rejected []rejection
	// result is how the run ends, as far as it has got.
	result result
}

// sharedPart is what every role's message starts with in a run: the task
// and the brief, made once when the first role starts (after the
// baseline, whose failures rank the files). With the shared system
// prompt and tool list it is the prefix every conversation of the run
// has in common, which the model server's prompt cache serves
// (doc/design.md §6.5).
type sharedPart struct {
	text string
	// task is text's first part: the task alone, without the brief.
	task string
	// all: the brief holds the text of every source file.
	all bool
	// files are the source files the brief was made of (nil: no brief),
	// for the whole-file coder's listing (fileListing).
	files *repomap.Map
}

// result is the run's conclusion: its status and the sentence saying why.
type result struct {
	status   string
	verified bool
	summary  string
	reason   string
	err      string
}

// fail ends the run with status "error".
func (r *run) fail(msg string) {
	r.result = result{status: report.StatusError, summary: r.result.summary, err: msg}
}

// cancel ends the run with status "cancelled".
func (r *run) cancel() {
	r.result = result{status: report.StatusCancelled, summary: r.result.summary, reason: ReasonCancelled, err: ReasonCancelled}
}

// rolesSoFar are the roles that ended, and the one under way when the run
// was interrupted.
func (r *run) rolesSoFar() []report.Role {
	if r.current == nil {
		return r.roles
	}
	return append(slices.Clone(r.roles), r.current.interrupted())
}

// changedList returns the sorted changed files.
func (r *run) changedList() []string {
	out := make([]string, 0, len(r.changed))
	for p := range r.changed {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// cycleOutcome is the result of one coder → verification → reviewer cycle.
type cycleOutcome struct {
	coder        outcome
	reviewer     outcome // zero when the reviewer did not run
	verification report.Verification
	changed      []string
	edits        []verify.Edit // the changed files with their pre-run content
	cancelled    bool
	verified     bool // the gate's decision: all of doc/design.md §8
	// again is the earlier rejection of the very files this cycle's coder
	// left: the reviewer was not asked again, and the run stops.
	again *rejection
}

// rejection is a change the reviewer rejected: the cycle it was
// reviewed in, the changed files' fingerprints then, and the verdict.
type rejection struct {
	cycle    int
	files    map[string]string
	reviewer report.Role
}

// reason explains in one sentence why a cycle did not verify, for the run
// report.
func (o cycleOutcome) reason(cfg *config.Config) string {
	switch {
	case o.coder.Status != report.StatusOK:
		return o.coder.reason(cfg)
	case len(o.changed) == 0 && o.verification.Reason == verify.ReasonNoChange:
		return verify.ReasonNoChange
	case len(o.changed) == 0 && !o.verification.Verified && o.verification.Reason != "":
		return reasonNoChange + ", and " + text.LowerFirst(o.verification.Reason)
	case !o.verification.Verified:
		return o.verification.Reason
	case o.again != nil:
		return advisoryNote(cfg, rejectedAgainReason(o.again.cycle, o.again.reviewer))
	case o.reviewer.Approved != nil && !*o.reviewer.Approved:
		return advisoryNote(cfg, rejectedReason(o.reviewer.Role))
	case o.reviewer.Status != report.StatusOK:
		return o.reviewer.reason(cfg)
	}
	return ""
}

// runGuard is a run's defence against edits that game "verified": the
// pre-run content of every file the run writes, and the baseline of the
// required checks.
type runGuard struct {
	originals *verify.Originals
	baseline  []report.CheckResult
	measured  bool
}

// newRunGuard returns the guard of a run whose writes are recorded by
// originals (nil: a recorder of its own, which the caller must hook in).
func newRunGuard() *runGuard {
	return &runGuard{originals: verify.NewOriginals()}
}
