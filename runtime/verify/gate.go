package verify

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"flow/bufferfs"
	"flow/runtime/report"
)

// Reasons of the gate's own steps.
const (
	// ReasonFingerprint prefixes a failure to hash the changed files:
	// freshness is then unknown, so the verification is stale.
	ReasonFingerprint = "Cannot fingerprint changed files: "
	// ReasonNoChecks is given when no check runner is configured.
	ReasonNoChecks = "No named checks can run: no check runner is configured"
	// ReasonNoChange is why a pass over no changed file is not verified:
	// checks that passed before the run say nothing about the task, and a
	// model that answers with code without writing it must not verify.
	ReasonNoChange = "No file was changed, so there is no change to verify: the coder must make the change with the file tools (answering with code changes nothing)"
)

// Gate is the host verification of one run: it alone decides whether a
// cycle's change is verified (doc/design.md §8). A cycle drives it in three steps,
// in this order:
//
//	p := gate.Begin(ctx, changed) // the coder finished: hash the changed files
//	v := p.Verify(ctx)            // checks, coverage, editor snapshot
//	// ... the reviewer runs ...
//	v, stale := p.Recheck(ctx)    // did anything change underneath?
//	ok := p.Verified(roles)       // all of doc/design.md §8, with the role outcomes
//
// The steps are split because the reviewer must see the verification
// (Verify) before freshness can be confirmed (Recheck), and because the
// fingerprints must be taken before the checks run, which may themselves
// touch files. Keeping the bookkeeping between the steps in a [Pass] means
// the caller holds no stale/snapshot state of its own.
//
// A Gate is a value: the zero value verifies nothing (no check runner) and
// must have FS set before Begin.
type Gate struct {
	// FS hashes the changed files. Required.
	FS bufferfs.FS
	// Checks runs every configured check (name ""); with an editor it
	// should be an [EditorChecks], which refuses unsaved buffers and
	// compares the editor snapshot around the checks. nil means no check
	// can run: the verification is unverified.
	Checks CheckRunner
	// Evidence gathers editor lint and diagnostics for coverage; nil
	// without an editor.
	Evidence EditorEvidence
	// Editor, when set (an editor is attached), is probed after the checks
	// and after review (doc/design.md §11.7).
	Editor EditorState
	// Guard, when set, compares the changed files with their pre-run
	// content and the checks with their baseline (see [Guard]).
	Guard *Guard
}

// Pass is one cycle's verification in progress, from [Gate.Begin] to
// [Pass.Recheck].
type Pass struct {
	gate    Gate
	changed []string
	before  map[string]string
	// hashErr is why the changed files could not be hashed at Begin;
	// freshness is then unknown and the verification stale for good.
	hashErr error
	// snap is the editor snapshot taken after the checks, which review
	// must leave unchanged; nil without an editor or when it could not be
	// taken (the verification is then already stale).
	snap map[string]any
	// cancelled records that ctx was done when the checks returned.
	cancelled bool
	v         report.Verification
	// edits are the changed files as the guard read them at Begin.
	edits []Edit
}

// Begin starts the verification of changed, the files the coder changed,
// as soon as the coder finished: it records their SHA-256 fingerprints,
// the state review must leave them in (doc/design.md §8.5).
func (g Gate) Begin(ctx context.Context, changed []string) *Pass {
	p := &Pass{gate: g, changed: changed}
	p.before, p.hashErr = Fingerprints(ctx, g.FS, changed)
	if g.Guard != nil {
		p.edits = g.Guard.edits(ctx, g.FS, changed)
	}
	return p
}

// Verify runs the checks, takes the editor snapshot (unless ctx was
// cancelled meanwhile) and the coverage of the changed files, and decides
// the verification (doc/design.md §8.2 items 3, 4 and the editor half of 6). A failed
// fingerprint at Begin, unsaved buffers or an unreachable editor make it
// stale. The result is the cycle's verification until [Pass.Recheck].
func (p *Pass) Verify(ctx context.Context) report.Verification {
	checks := p.runChecks(ctx)
	p.cancelled = ctx.Err() != nil
	var editorReason string
	if p.gate.Editor != nil && !p.cancelled {
		p.snap, editorReason = EditorSnapshot(ctx, p.gate.Editor)
	}
	cov := Coverage(ctx, p.changed, checks.Checks, p.gate.Evidence)
	v := Decide(checks, cov, p.before)
	if p.hashErr != nil {
		MarkStale(&v, ReasonFingerprint+p.hashErr.Error())
	}
	if editorReason != "" {
		MarkStale(&v, editorReason)
	}
	if len(p.changed) == 0 && v.Verified {
		v.Verified, v.Status, v.Reason = false, report.StatusUnverified, ReasonNoChange
	}
	if p.gate.Guard != nil && !p.cancelled {
		p.gate.Guard.apply(ctx, &v, p.edits)
	}
	p.v = v
	return v
}

// Edits are the changed files with their pre-run content and the
// weakening found in them (nil without a [Guard]), for the reviewer.
func (p *Pass) Edits() []Edit { return p.edits }

// Cancelled reports whether ctx was cancelled by the time the checks of
// [Pass.Verify] returned: the cycle then stops before review.
func (p *Pass) Cancelled() bool { return p.cancelled }

// Fingerprints are the changed files' SHA-256 fingerprints taken at
// [Gate.Begin] ("" for a deleted file), and whether all of them could be
// taken. The map is the caller's to keep.
func (p *Pass) Fingerprints() (map[string]string, bool) {
	return maps.Clone(p.before), p.hashErr == nil
}

// runChecks runs every configured check.
func (p *Pass) runChecks(ctx context.Context) report.CheckReport {
	if p.gate.Checks == nil {
		return report.CheckReport{
			Status: report.StatusUnverified,
			Checks: []report.CheckResult{},
			Reason: ReasonNoChecks,
		}
	}
	return p.gate.Checks.Run(ctx, "")
}

// Recheck confirms, after review, that nothing changed underneath (doc/design.md §8.5): every changed file still has the fingerprint of Begin and, with
// an editor, nothing is unsaved and every observed path and buffer of the
// snapshot is unchanged (doc/design.md §11.7). It returns the cycle's verification and
// whether this check made it stale; a pass whose fingerprints failed at
// Begin is stale already and is not checked again.
func (p *Pass) Recheck(ctx context.Context) (report.Verification, bool) {
	if p.hashErr != nil {
		return p.v, false
	}
	var reason string
	after, err := Fingerprints(ctx, p.gate.FS, p.changed)
	switch {
	case err != nil:
		reason = ReasonFingerprint + err.Error()
	case len(Changed(p.before, after)) > 0:
		reason = staleReason(Changed(p.before, after))
	case p.snap != nil:
		reason = EditorUnchanged(ctx, p.gate.Editor, p.snap)
	}
	if reason == "" {
		return p.v, false
	}
	MarkStale(&p.v, reason)
	return p.v, true
}

// Roles are the role outcomes of one cycle that doc/design.md §8.2 items 1
// and 7 rest on. A role that did not run is the zero Role.
type Roles struct {
	Planner, Coder, Reviewer report.Role
}

// Verified reports whether the cycle is verified: all of doc/design.md
// §8.2. The planner finished ok or was skipped by the host
// (agent.planner = "auto"), the coder finished ok (item 1), the
// verification is verified (items 2–6, from Verify and Recheck), and the
// reviewer finished ok with a structured verdict that approves (item 7).
func (p *Pass) Verified(roles Roles) bool {
	approved := roles.Reviewer.Approved
	planned := roles.Planner.Status == report.StatusOK || roles.Planner.Status == report.StatusSkipped
	return planned &&
		roles.Coder.Status == report.StatusOK &&
		roles.Reviewer.Status == report.StatusOK && approved != nil && *approved &&
		p.v.Verified
}

// staleReason names the files that changed after the checks ran.
func staleReason(files []string) string {
	const most = 3
	list := strings.Join(files[:min(len(files), most)], ", ")
	if len(files) > most {
		list += fmt.Sprintf(" and %d more", len(files)-most)
	}
	return ReasonStale + ": " + list + " changed after the checks ran, so their results no longer apply; run again"
}
